package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// corralConfig writes a config for corral serving dir: every named plugin
// with instances instances and the notify grant, compiled through cache.
func corralConfig(path, dir, cache string, names []string, instances int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "log:\n  level: warn\nplugins:\n  dir: %s\n  cacheDir: %s\nplugin:\n", dir, cache)
	for _, n := range names {
		fmt.Fprintf(&b, "  %s:\n    limits:\n      instances: %d\n    grants:\n      notify: true\n", n, instances)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// readyz is a readiness probe: /readyz answers 200 once the plugin
// directory is loaded.
func readyz(mcpURL string) error {
	resp, err := http.Get(strings.TrimSuffix(mcpURL, "/mcp") + "/readyz")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("readyz: HTTP %d", resp.StatusCode)
	}
	return nil
}

// fleet writes n fixture plugins of count resources each (bfx000 …) to a
// fresh dir and returns their names.
func fleet(o options, dir string, n, count int) ([]string, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	old := time.Now().Add(-time.Hour)
	var names []string
	for i := range n {
		name := fmt.Sprintf("bfx%03d", i)
		if err := copyPlugin(o.fixture, dir, "bfx000:0100", fmt.Sprintf("%s:%04d", name, count), old); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

// startFleet serves n plugins of count resources with corral.
func startFleet(ctx context.Context, o options, tag string, n, count, instances int) (*proc, []string, error) {
	dir := filepath.Join(o.out, "fleet-"+tag)
	names, err := fleet(o, dir, n, count)
	if err != nil {
		return nil, nil, err
	}
	cfg := filepath.Join(o.out, "fleet-"+tag+".yaml")
	if err := corralConfig(cfg, dir, filepath.Join(o.out, "cache"), names, instances); err != nil {
		return nil, nil, err
	}
	adminPort, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	admin := fmt.Sprintf("127.0.0.1:%d", adminPort)
	p, err := start(ctx, "corral-"+tag, filepath.Join(o.out, "logs", "corral-"+tag+".log"), nil, 10*time.Minute, readyz,
		o.corral, "serve", "--config", cfg, "--http", "127.0.0.1:{port}", "--admin", admin)
	if err != nil {
		return nil, nil, err
	}
	p.admin = "http://" + admin // /metrics is served there (and to operators only on the MCP listener)
	return p, names, nil
}

// peakRSS samples pid's RSS every 50 ms while fn runs and returns the peak.
func peakRSS(pid int, fn func()) int64 {
	var peak atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if r, err := rssKiB(pid); err == nil && r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	return peak.Load()
}

// lastCursor walks resources/list to its end and returns the cursor of
// the last page and the number of pages.
func lastCursor(ctx context.Context, url string) (string, int, error) {
	cl := newClient(1)
	defer cl.CloseIdleConnections()
	var buf bytes.Buffer
	cursor, pages := "", 0
	for {
		c := callList
		if cursor != "" {
			c.params = `"cursor":"` + cursor + `",`
		}
		if err := do(ctx, cl, url, c, c.body(), &buf); err != nil {
			return "", 0, err
		}
		pages++
		var r struct {
			Result struct {
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(buf.Bytes(), &r); err != nil {
			return "", 0, fmt.Errorf("list: %w", err)
		}
		if r.Result.NextCursor == "" {
			return cursor, pages, nil
		}
		cursor = r.Result.NextCursor
	}
}

// instanceMemory ends row 5: the memory of one more instance of a Go
// guest.
func instanceMemory(ctx context.Context, o options, t *table) error {
	// One more instance of a Go guest: one plugin allowed 1 and 8
	// instances, used by 8 clients, then idle. The pool grows on demand,
	// so the instances actually live are read from the server's metrics.
	var (
		rss  [2]int64
		live [2]int
	)
	for i, inst := range []int{1, 8} {
		p, _, err := startFleet(ctx, o, fmt.Sprintf("inst%d", inst), 1, 100, inst)
		if err != nil {
			return err
		}
		lr := load(ctx, p.url, []call{callRead}, 8, o.warm, 2*o.dur)
		time.Sleep(500 * time.Millisecond)
		rss[i], err = rssKiB(p.pid())
		if err == nil {
			live[i], err = liveInstances(ctx, p.admin+"/metrics")
		}
		p.stop()
		if err != nil {
			return err
		}
		if lr.errs > 0 {
			return fmt.Errorf("instances %d: %v", inst, lr.firstErr)
		}
	}
	if live[1] <= live[0] {
		t.note(fmt.Sprintf("Memory of one more Go-guest instance: not measured (the pool allowed 8 instances but %d were live).", live[1]))
		return nil
	}
	per := float64(rss[1]-rss[0]) / float64(live[1]-live[0])
	t.note(fmt.Sprintf("Memory of one more Go-guest instance (fixture plugin, warm): %s "+
		"(RSS %s with %d live instances − %s with %d, ÷ %d; `corral_plugin_instances` from /metrics).",
		fmtMiB(int64(per)), fmtMiB(rss[1]), live[1], fmtMiB(rss[0]), live[0], live[1]-live[0]))
	return nil
}

// liveInstances sums the corral_plugin_instances gauge of a server's
// Prometheus endpoint, which must have it.
func liveInstances(ctx context.Context, url string) (int, error) {
	total, found, err := countInstances(ctx, url)
	if err == nil && !found {
		err = fmt.Errorf("metrics: no corral_plugin_instances at %s", url)
	}
	return total, err
}

// countInstances sums the corral_plugin_instances gauge of a server's
// Prometheus endpoint and says whether it has one (a server whose
// plugins all sleep may have none).
func countInstances(ctx context.Context, url string) (total int, found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return 0, false, fmt.Errorf("metrics: %w", err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if !strings.HasPrefix(line, "corral_plugin_instances{") {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err != nil {
			return 0, false, fmt.Errorf("metrics: %q: %w", line, err)
		}
		total += int(v)
		found = true
	}
	return total, found, nil
}
