package notify

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corral-mcp/corral/abi"
)

// kinds returns "kind uri" strings for events, for diffs.
func kinds(evs []Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, strings.TrimPrefix(e.Kind.Method(), "notifications/")+" "+e.URI)
	}
	return out
}

func TestDelivery(t *testing.T) {
	type pub struct {
		k   Kind
		uri string
	}
	tests := []struct {
		name   string
		filter Filter
		who    string
		pubs   []pub
		want   []string
	}{
		{"nothing asked", Filter{}, "a",
			[]pub{{ToolsListChanged, ""}, {ResourceUpdated, "file:///x"}}, nil},
		{"lists only what was asked", Filter{ToolsListChanged: true}, "a",
			[]pub{{PromptsListChanged, ""}, {ToolsListChanged, ""}, {ResourcesListChanged, ""}}, []string{"tools/list_changed "}},
		{"exact URI", Filter{Resources: []string{"test://a"}}, "a",
			[]pub{{ResourceUpdated, "test://b"}, {ResourceUpdated, "test://a"}}, []string{"resources/updated test://a"}},
		{"sub-resource", Filter{Resources: []string{"file:///dir"}}, "a",
			[]pub{{ResourceUpdated, "file:///dir/x.txt"}, {ResourceUpdated, "file:///dirt"}, {ResourceUpdated, "file:///dir/sub/y"}},
			[]string{"resources/updated file:///dir/x.txt", "resources/updated file:///dir/sub/y"}},
		{"sub-resource of a slash-ended URI", Filter{Resources: []string{"file:///dir/"}}, "a",
			[]pub{{ResourceUpdated, "file:///dir/x"}}, []string{"resources/updated file:///dir/x"}},
		{"coalesced repeats", Filter{Resources: []string{"test://a"}, ToolsListChanged: true}, "a",
			[]pub{{ResourceUpdated, "test://a"}, {ToolsListChanged, ""}, {ResourceUpdated, "test://a"}, {ToolsListChanged, ""}},
			[]string{"resources/updated test://a", "tools/list_changed "}},
		{"invisible URI", Filter{Resources: []string{"secret://x", "test://a"}}, "bob",
			[]pub{{ResourceUpdated, "secret://x"}, {ResourceUpdated, "test://a"}}, []string{"resources/updated test://a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(Options{Visible: func(p abi.Principal, uri string) bool {
				return p.ID != "bob" || !strings.HasPrefix(uri, "secret:")
			}})
			s := h.Subscribe(abi.Principal{ID: tt.who}, tt.filter)
			defer s.Close()
			for _, p := range tt.pubs {
				h.Publish(p.k, p.uri)
			}
			if diff := cmp.Diff(tt.want, kinds(s.Take())); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if got := s.Take(); got != nil {
				t.Errorf("second Take = %v, want nothing", got)
			}
		})
	}
}

func TestReadySignal(t *testing.T) {
	h := New(Options{})
	s := h.Subscribe(abi.Principal{}, Filter{PromptsListChanged: true})
	select {
	case <-s.Ready():
		t.Fatal("ready before anything was published")
	default:
	}
	h.Notify("p", abi.NotifyPromptsListChanged, "")
	select {
	case <-s.Ready():
	case <-time.After(time.Second):
		t.Fatal("not ready after a publish")
	}
	if got := kinds(s.Take()); !cmp.Equal(got, []string{"prompts/list_changed "}) {
		t.Errorf("Take = %v", got)
	}
}

func TestAddRemoveClose(t *testing.T) {
	h := New(Options{MaxURIs: 2})
	s := h.Subscribe(abi.Principal{}, Filter{})
	for _, u := range []string{"t://1", "t://2"} {
		if !s.Add(u) {
			t.Errorf("Add(%s) = false", u)
		}
	}
	if s.Add("t://3") {
		t.Error("Add beyond MaxURIs succeeded")
	}
	h.Publish(ResourceUpdated, "t://1")
	h.Publish(ResourceUpdated, "t://2")
	s.Remove("t://1") // also drops its pending update
	h.Publish(ResourceUpdated, "t://1")
	if diff := cmp.Diff([]string{"resources/updated t://2"}, kinds(s.Take())); diff != "" {
		t.Errorf("after Remove (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Filter{Resources: []string{"t://2"}}, s.Filter()); diff != "" {
		t.Errorf("Filter (-want +got):\n%s", diff)
	}
	if h.Len() != 1 {
		t.Errorf("Len = %d", h.Len())
	}
	h.Close()
	select {
	case <-s.Done():
	default:
		t.Error("Done not closed by Hub.Close")
	}
	late := h.Subscribe(abi.Principal{}, Filter{ToolsListChanged: true})
	select {
	case <-late.Done():
	default:
		t.Error("a subscription on a closed hub is not born done")
	}
	s.Close() // idempotent
}

func TestPendingBound(t *testing.T) {
	h := New(Options{MaxPending: 3})
	s := h.Subscribe(abi.Principal{}, Filter{Resources: []string{"file:///d"}})
	for i := range 10 {
		h.Publish(ResourceUpdated, "file:///d/"+string(rune('a'+i)))
	}
	want := []string{"resources/updated file:///d/a", "resources/updated file:///d/b", "resources/updated file:///d/c", "resources/updated file:///d"}
	if diff := cmp.Diff(want, kinds(s.Take())); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := s.Coalesced(); got != 7 {
		t.Errorf("Coalesced = %d, want 7", got)
	}
}

// BenchmarkFanout publishes one update to 1,000 subscribers of that URI
// (and 1,000 that want another one).
func BenchmarkFanout(b *testing.B) {
	h := New(Options{})
	var subs []*Subscription
	for i := range 2000 {
		u := "test://hot"
		if i%2 == 1 {
			u = "test://cold"
		}
		subs = append(subs, h.Subscribe(abi.Principal{}, Filter{Resources: []string{u}}))
	}
	b.ResetTimer()
	for range b.N {
		h.Publish(ResourceUpdated, "test://hot")
		for _, s := range subs[:2] {
			s.Take()
		}
	}
}
