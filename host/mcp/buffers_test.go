package mcp

import (
	"context"
	"sync"
	"testing"
)

func TestResponseBuffer(t *testing.T) {
	tests := []struct {
		name     string
		recycled int // capacity handed back first; 0: none
		want     int
	}{
		{"fresh", 0, 100},
		{"recycled big enough", 4096, 100},
		{"recycled too small", 16, 1000},
		{"recycled over the limit", maxPooled + 1, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.recycled > 0 {
				Recycle(append(make([]byte, 0, tt.recycled), "stale"...))
			}
			b := ResponseBuffer(tt.want)
			if len(b) != 0 || cap(b) < tt.want {
				t.Errorf("ResponseBuffer(%d): len %d cap %d", tt.want, len(b), cap(b))
			}
			if cap(b) > maxPooled {
				t.Errorf("a buffer over maxPooled was kept: cap %d", cap(b))
			}
		})
	}
}

// TestRecycledResponsesStayIntact serves concurrently while recycling every
// response; a buffer handed out twice would corrupt one (and trip -race).
func TestRecycledResponsesStayIntact(t *testing.T) {
	s := newServer(t)
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://static-text",` + modernMeta + `}}`)
	want := string(s.ServeBytes(context.Background(), Request{}, msg).Msg)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				r := s.ServeBytes(context.Background(), Request{}, msg)
				if got := string(r.Msg); got != want {
					t.Errorf("response changed:\n got %s\nwant %s", got, want)
					return
				}
				Recycle(r.Msg)
			}
		})
	}
	wg.Wait()
}
