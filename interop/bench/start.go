package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// rowStart is row 6: time to ready with the bundled plugins (make run's
// sample configuration) with a cold and with a warm compilation cache;
// time from a new .wasm landing in the plugin directory to its serving;
// and request errors while plugins are replaced under load.
func rowStart(ctx context.Context, o options, t *table) error {
	sample := filepath.Join(o.root, "testdata", "sample", "corral.yaml")
	var cold, warm []float64
	for i := range o.reps {
		cache := filepath.Join(o.out, fmt.Sprintf("start-cache-%d", i))
		if err := os.RemoveAll(cache); err != nil {
			return fmt.Errorf("cache: %w", err)
		}
		for j, into := range []*[]float64{&cold, &warm} {
			t0 := time.Now()
			p, err := start(ctx, "corral-start", filepath.Join(o.out, "logs", fmt.Sprintf("corral-start-%d-%d.log", i, j)),
				[]string{"CORRAL_PLUGINS_CACHE_DIR=" + cache, "CORRAL_LOG_LEVEL=warn"}, 2*time.Minute, readyz,
				o.corral, "serve", "--config", sample, "--http", "127.0.0.1:{port}")
			if err != nil {
				return err
			}
			*into = append(*into, float64(time.Since(t0)))
			p.stop()
		}
		_ = os.RemoveAll(cache)
	}
	bundled, _ := filepath.Glob(filepath.Join(o.root, "build", "plugins", "*.wasm"))
	c, w := median(cold), median(warm)
	t.section("6. Start and reload", "measure", "figure", "target")
	t.row(fmt.Sprintf("time to ready, %d bundled plugins, cold compilation cache", len(bundled)), fmtDur(time.Duration(c)), "")
	t.row("time to ready, warm compilation cache", fmtDur(time.Duration(w)), fmt.Sprintf("cold ÷ warm %s (≥ 5×)", fmtRatio(c/w)))

	// Reload: one fixture plugin under 8 clients of reads; a new plugin
	// lands (renamed into place), then the served one is replaced twice.
	p, _, err := startFleet(ctx, o, "reload", 1, 100, 2)
	if err != nil {
		return err
	}
	defer p.stop()
	dir := filepath.Join(o.out, "fleet-reload")
	var landed []float64
	var lr loadResult
	var wg sync.WaitGroup
	wg.Add(1)
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	go func() {
		defer wg.Done()
		lr = load(loadCtx, p.url, []call{callRead}, 8, 0, time.Hour)
	}()
	time.Sleep(o.warm)
	landing := func(spec string) (time.Duration, error) {
		tmp := filepath.Join(o.out, "landing")
		name := spec[:6]
		if err := copyPlugin(o.fixture, tmp, "bfx000:0100", spec, time.Now()); err != nil {
			return 0, err
		}
		read := call{"resources/read", name + "://doc", `"uri":"` + name + `://doc",`}
		if name == "bfx000" {
			read = call{"resources/list", "", ""}
		}
		before := []byte{}
		if name == "bfx000" {
			before = listBody(ctx, p.url)
		}
		t0 := time.Now()
		if err := os.Rename(filepath.Join(tmp, name+".wasm"), filepath.Join(dir, name+".wasm")); err != nil {
			return 0, fmt.Errorf("landing: %w", err)
		}
		cl := newClient(1)
		defer cl.CloseIdleConnections()
		var buf bytes.Buffer
		for time.Since(t0) < time.Minute {
			if name != "bfx000" {
				if do(ctx, cl, p.url, read, read.body(), &buf) == nil {
					return time.Since(t0), nil
				}
			} else if b := listBody(ctx, p.url); b != nil && !bytes.Equal(b, before) {
				return time.Since(t0), nil
			}
			time.Sleep(5 * time.Millisecond)
		}
		return 0, fmt.Errorf("%s not served a minute after landing", spec)
	}
	for i, spec := range []string{"bfx001:0100", "bfx000:0099", "bfx000:0098"} {
		d, err := landing(spec)
		if err != nil {
			return err
		}
		if i == 0 {
			landed = append(landed, float64(d))
		}
	}
	time.Sleep(500 * time.Millisecond)
	stopLoad()
	wg.Wait()
	t.row("new .wasm renamed into the directory → serving (default 250 ms debounce)", fmtDur(time.Duration(median(landed))), "")
	t.row(fmt.Sprintf("request errors during 1 added + 2 replaced plugins under 8 clients (%d reads)", lr.n+lr.errs),
		fmt.Sprint(lr.errs), "0")
	if lr.errs > 0 {
		t.note(fmt.Sprintf("First error during reload: %v", lr.firstErr))
	}
	return nil
}

// listBody returns the first resources/list page, or nil.
func listBody(ctx context.Context, url string) []byte {
	cl := newClient(1)
	defer cl.CloseIdleConnections()
	var buf bytes.Buffer
	if do(ctx, cl, url, callList, callList.body(), &buf) != nil {
		return nil
	}
	return bytes.Clone(buf.Bytes())
}
