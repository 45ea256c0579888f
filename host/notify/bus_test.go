package notify

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corral-mcp/corral/abi"
)

// recordingBus is a Bus that keeps what the hub publishes on it.
type recordingBus struct{ sent []Message }

func (b *recordingBus) Publish(m Message) { b.sent = append(b.sent, m) }

var _ Bus = (*recordingBus)(nil)

// TestHubOnBus: a plugin's notify calls go to the local listeners and on
// the bus with the plugin and generation; plugin-set swaps stay local;
// what the bus delivers reaches the listeners that asked for it and may
// see it, and is not sent again; invalid messages are dropped; Resync
// tells every list listener to list again.
func TestHubOnBus(t *testing.T) {
	bus := &recordingBus{}
	h := New(Options{Bus: bus, Generation: func() string { return "g1" },
		Visible: func(p abi.Principal, uri string) bool { return p.ID != "bob" || uri != "test://secret" }})
	alice := h.Subscribe(abi.Principal{ID: "alice"}, Filter{Resources: []string{"test://a", "test://secret"}, ToolsListChanged: true})
	bob := h.Subscribe(abi.Principal{ID: "bob"}, Filter{Resources: []string{"test://secret"}, PromptsListChanged: true})

	h.Notify("p", abi.NotifyResourceUpdated, "test://a")
	h.Notify("p", abi.NotifyToolsListChanged, "")
	h.ListsChanged(true, true, true)
	if diff := cmp.Diff([]Message{
		{Kind: ResourceUpdated, URI: "test://a", Plugin: "p", Generation: "g1"},
		{Kind: ToolsListChanged, Plugin: "p", Generation: "g1"},
	}, bus.sent); diff != "" {
		t.Errorf("on the bus (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"resources/updated test://a", "tools/list_changed "}, kinds(alice.Take())); diff != "" {
		t.Errorf("alice, local (-want +got):\n%s", diff)
	}
	bob.Take()

	for _, m := range []Message{
		{Kind: ResourceUpdated, URI: "test://secret", Origin: "r2"},
		{Kind: ResourceUpdated, Origin: "r2"}, // no URI
		{Kind: 99, URI: "test://a", Origin: "r2"},
	} {
		h.Receive(m)
	}
	if diff := cmp.Diff([]string{"resources/updated test://secret"}, kinds(alice.Take())); diff != "" {
		t.Errorf("alice, from the bus (-want +got):\n%s", diff)
	}
	if got := bob.Take(); len(got) != 0 {
		t.Errorf("bob heard %q, which he may not see", kinds(got))
	}
	if len(bus.sent) != 2 {
		t.Errorf("received messages were published again: %+v", bus.sent[2:])
	}

	h.Resync()
	if diff := cmp.Diff([]string{"tools/list_changed "}, kinds(alice.Take())); diff != "" {
		t.Errorf("alice after Resync (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"prompts/list_changed "}, kinds(bob.Take())); diff != "" {
		t.Errorf("bob after Resync (-want +got):\n%s", diff)
	}
}
