//go:build !wasip1

package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceFixtures(t *testing.T) {
	h := corral.NewFakeHost(abi.CapNotify, abi.CapLog)
	defer corral.UseHost(h)()
	p := newPlugin()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		op     abi.Op
		req    string
		status abi.Status
		want   []string // substrings of the response
	}{
		{"static text", abi.OpReadResource, `{"uri":"test://static-text","principal":{"id":"c"}}`, abi.StatusOK,
			[]string{`"mimeType":"text/plain","text":"This is the content of the static text resource."`}},
		{"static binary", abi.OpReadResource, `{"uri":"test://static-binary","principal":{"id":"c"}}`, abi.StatusOK,
			[]string{`"mimeType":"image/png","blob":"iVBORw0KGgo`}},
		{"template", abi.OpReadResource, `{"uri":"test://template/123/data","template":"test://template/{id}/data","variables":{"id":"123"},"principal":{"id":"c"}}`, abi.StatusOK,
			[]string{`"text":"{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}"`}},
		{"template without host match", abi.OpReadResource, `{"uri":"test://template/7/data","principal":{"id":"c"}}`, abi.StatusOK,
			[]string{`Data for ID: 7`}},
		{"nonexistent resource", abi.OpReadResource, `{"uri":"test://nonexistent-resource-for-conformance-testing","principal":{"id":"c"}}`, abi.StatusError,
			[]string{`"code":"not_found"`}},
		{"prompt with arguments", abi.OpGetPrompt, `{"name":"test_prompt_with_arguments","arguments":{"arg1":"testValue1","arg2":"testValue2"},"principal":{"id":"c"}}`, abi.StatusOK,
			[]string{`Prompt with arguments: arg1='testValue1', arg2='testValue2'`}},
		{"prompt with embedded resource", abi.OpGetPrompt, `{"name":"test_prompt_with_embedded_resource","arguments":{"resourceUri":"test://example-resource"},"principal":{"id":"c"}}`, abi.StatusOK,
			[]string{`{"type":"resource","resource":{"uri":"test://example-resource","mimeType":"text/plain","text":"Embedded resource content for testing."}}`}},
		{"prompt with foreign resource", abi.OpGetPrompt, `{"name":"test_prompt_with_embedded_resource","arguments":{"resourceUri":"file:///etc/passwd"},"principal":{"id":"c"}}`, abi.StatusError,
			[]string{`"code":"invalid_params"`}},
		{"prompt with image", abi.OpGetPrompt, `{"name":"test_prompt_with_image","principal":{"id":"c"}}`, abi.StatusOK,
			[]string{`{"type":"image","data":"iVBORw0KGgo`, `"mimeType":"image/png"`, `Please analyze the image above.`}},
		{"complete arg1", abi.OpComplete, `{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"par"},"principal":{"id":"c"}}`, abi.StatusOK,
			[]string{`{"completion":{"values":["paris","park","party"],"total":3}}`}},
		{"complete template id", abi.OpComplete, `{"ref":{"type":"ref/resource","uri":"test://template/{id}/data"},"argument":{"name":"id","value":"1"},"principal":{"id":"c"}}`, abi.StatusOK,
			[]string{`"values":["1","123"]`}},
		{"simple text", abi.OpCallTool, `{"name":"test_simple_text","principal":{"id":"c"}}`, abi.StatusOK,
			[]string{`{"content":[{"type":"text","text":"This is a simple text response for testing."}]}`}},
		{"audio", abi.OpCallTool, `{"name":"test_audio_content","arguments":{},"principal":{"id":"c"}}`, abi.StatusOK,
			[]string{`"type":"audio","data":"UklGR`, `"mimeType":"audio/wav"`}},
		{"mixed", abi.OpCallTool, `{"name":"test_multiple_content_types","arguments":{},"principal":{"id":"c"}}`, abi.StatusOK,
			[]string{`"type":"text"`, `"type":"image"`, `"type":"resource"`, `test://mixed-content-resource`}},
		{"embedded", abi.OpCallTool, `{"name":"test_embedded_resource","arguments":{},"principal":{"id":"c"}}`, abi.StatusOK,
			[]string{`{"uri":"test://embedded-resource","mimeType":"text/plain","text":"This is an embedded resource content."}`}},
		{"error", abi.OpCallTool, `{"name":"test_error_handling","arguments":{},"principal":{"id":"c"}}`, abi.StatusOK,
			[]string{`"isError":true`, `This tool intentionally returns an error for testing`}},
		{"schema tool", abi.OpCallTool, `{"name":"json_schema_2020_12_tool","arguments":{"name":"x","email":"e"},"principal":{"id":"c"}}`, abi.StatusOK,
			[]string{`JSON Schema 2020-12 tool called with: {\"name\":\"x\",\"email\":\"e\"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := p.Handle(tt.op, []byte(tt.req))
			if status != tt.status {
				t.Errorf("status = %d, want %d: %s", status, tt.status, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("response %s\ndoes not contain %s", out, w)
				}
			}
		})
	}
}

func TestToolsListShape(t *testing.T) {
	m := newPlugin().Manifest()
	for _, tool := range m.Tools {
		if tool.Description == "" || !json.Valid(tool.InputSchema) {
			t.Errorf("tool %s: description %q, schema %s", tool.Name, tool.Description, tool.InputSchema)
		}
	}
	for _, pr := range m.Prompts {
		if pr.Description == "" {
			t.Errorf("prompt %s has no description", pr.Name)
		}
	}
	var schema map[string]any
	i := slices.IndexFunc(m.Tools, func(t abi.Tool) bool { return t.Name == "json_schema_2020_12_tool" })
	if i < 0 {
		t.Fatal("json_schema_2020_12_tool missing")
	}
	if err := json.Unmarshal(m.Tools[i].InputSchema, &schema); err != nil || schema["$schema"] == nil {
		t.Errorf("json_schema_2020_12_tool schema lost its keywords: %v %v", schema, err)
	}
}

func TestTriggersNotify(t *testing.T) {
	h := corral.NewFakeHost(abi.CapNotify, abi.CapLog)
	defer corral.UseHost(h)()
	p := newPlugin()
	for _, name := range []string{"test_trigger_tool_change", "test_trigger_prompt_change", "test_tool_with_logging"} {
		if status, out := p.Handle(abi.OpCallTool, []byte(`{"name":"`+name+`","principal":{"id":"c"}}`)); status != abi.StatusOK || strings.Contains(string(out), "isError") {
			t.Errorf("%s: %d %s", name, status, out)
		}
	}
	want := []corral.FakeNotification{{Kind: abi.NotifyToolsListChanged}, {Kind: abi.NotifyPromptsListChanged}}
	if diff := cmp.Diff(want, h.Notifications()); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
	if got := len(h.Logs()); got != 3 {
		t.Errorf("%d log lines, want 3", got)
	}

	// Without the notify grant the trigger reports a tool error.
	defer corral.UseHost(corral.NewFakeHost())()
	status, out := p.Handle(abi.OpCallTool, []byte(`{"name":"test_trigger_tool_change","principal":{"id":"c"}}`))
	if status != abi.StatusOK || !strings.Contains(string(out), `"isError":true`) || !strings.Contains(string(out), "permission denied") {
		t.Errorf("ungranted trigger: %d %s", status, out)
	}
}

func TestWAV(t *testing.T) {
	if len(silence) != 46 || string(silence[:4]) != "RIFF" || string(silence[8:16]) != "WAVEfmt " || string(silence[36:40]) != "data" {
		t.Errorf("bad WAV header: % x", silence)
	}
}
