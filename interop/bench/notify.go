package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// rowNotify is row 7: 1,000 subscriptions/listen streams on the document;
// a tools/call of touch makes the plugin notify once; each stream's
// latency is from sending the call to reading its
// notifications/resources/updated.
func rowNotify(ctx context.Context, o options, t *table) error {
	const streams = 1000
	p, _, err := startFleet(ctx, o, "notify", 1, 100, 2)
	if err != nil {
		return err
	}
	defer p.stop()
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams, DisableCompression: true}}
	defer cl.CloseIdleConnections()
	listen := call{"subscriptions/listen", "", `"notifications":{"resourceSubscriptions":["` + docURI + `"]},`}
	acked := make(chan error, streams)
	got := make([]chan time.Time, streams)
	var wg sync.WaitGroup
	for i := range streams {
		got[i] = make(chan time.Time, 16)
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := cl.Do(newRequest(lctx, p.url, listen, listen.body()))
			if err != nil {
				acked <- err
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				acked <- fmt.Errorf("listen: HTTP %d", resp.StatusCode)
				return
			}
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				line := sc.Bytes()
				switch {
				case bytes.Contains(line, []byte("notifications/subscriptions/acknowledged")):
					acked <- nil
				case bytes.Contains(line, []byte("notifications/resources/updated")):
					got[i] <- time.Now()
				}
			}
		}()
	}
	for range streams {
		select {
		case err := <-acked:
			if err != nil {
				return fmt.Errorf("listen: %w", err)
			}
		case <-time.After(30 * time.Second):
			return fmt.Errorf("listen: fewer than %d streams acknowledged in 30 s", streams)
		}
	}
	touch := call{"tools/call", "touch", `"name":"touch","arguments":{},`}
	tcl := newClient(1)
	defer tcl.CloseIdleConnections()
	var buf bytes.Buffer
	var p50s, p99s, maxs []time.Duration
	for range o.reps + 2 { // the first two warm the path
		t0 := time.Now()
		if err := do(ctx, tcl, p.url, touch, touch.body(), &buf); err != nil {
			return err
		}
		lat := make([]time.Duration, 0, streams)
		deadline := time.After(10 * time.Second)
		for i := range streams {
			select {
			case at := <-got[i]:
				lat = append(lat, at.Sub(t0))
			case <-deadline:
				return fmt.Errorf("notify: %d of %d streams received the update within 10 s", len(lat), streams)
			}
		}
		slices.Sort(lat)
		p50s, p99s, maxs = append(p50s, percentile(lat, 0.5)), append(p99s, percentile(lat, 0.99)), append(maxs, lat[len(lat)-1])
		time.Sleep(200 * time.Millisecond)
	}
	p50s, p99s, maxs = p50s[2:], p99s[2:], maxs[2:]
	t.section(fmt.Sprintf("7. Notification fan-out to %d listen streams (one resources/updated per tools/call)", streams),
		"streams", "p50", "p99", "last stream")
	t.row(fmt.Sprint(streams), fmtDur(median(p50s)), fmtDur(median(p99s)), fmtDur(median(maxs)))
	t.note("Latency runs from sending the tools/call that makes the plugin notify to each stream reading its " +
		"`notifications/resources/updated` event; " + strings.TrimSpace(fmt.Sprintf("median of %d triggers.", len(p50s))))
	cancel()
	wg.Wait()
	return nil
}
