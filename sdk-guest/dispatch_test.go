package corral

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/google/go-cmp/cmp"
)

// testPlugin registers one of everything.
func testPlugin() *Plugin {
	p := New("demo", "1.0.0")
	p.Scheme("demo")
	p.Resource(abi.Resource{URI: "demo://hello", Name: "hello", MimeType: "text/plain"},
		func(r *abi.ReadResourceRequest) (*abi.ReadResourceResult, error) {
			return Contents(TextContents(r.URI, "text/plain", "hello "+r.Principal.ID)), nil
		})
	p.Template(abi.Template{URITemplate: "demo://items/{id}", Name: "item"},
		func(r *abi.ReadResourceRequest) (*abi.ReadResourceResult, error) {
			if r.Variables["id"] == "missing" {
				return nil, NotFound("no such item")
			}
			return Contents(TextContents(r.URI, "", "item "+r.Variables["id"])), nil
		},
		func(r *abi.CompleteRequest) ([]string, error) {
			var out []string
			for i := range 150 {
				v := fmt.Sprint(i)
				if strings.HasPrefix(v, r.Argument.Value) {
					out = append(out, v)
				}
			}
			return out, nil
		})
	p.Reader(func(r *abi.ReadResourceRequest) (*abi.ReadResourceResult, error) {
		if r.URI == "demo://dynamic" {
			return Contents(BlobContents(r.URI, "application/octet-stream", []byte{0, 1, 2})), nil
		}
		return nil, NotFound("unknown " + r.URI)
	})
	p.Lister(func(r *abi.ListResourcesRequest) ([]abi.Resource, string, error) {
		if r.Cursor == "" {
			return []abi.Resource{{URI: "demo://dynamic", Name: "dynamic"}}, "page2", nil
		}
		return []abi.Resource{{URI: "demo://other", Name: "other"}}, "", nil
	})
	p.Prompt(abi.Prompt{Name: "greet", Arguments: []abi.PromptArgument{{Name: "who", Required: true}, {Name: "tone"}}},
		func(r *abi.GetPromptRequest) (*abi.GetPromptResult, error) {
			return Messages("a greeting", UserMessage(Text("Greet "+r.Arguments["who"]))), nil
		},
		func(r *abi.CompleteRequest) ([]string, error) {
			if r.Argument.Name == "tone" && r.Arguments["who"] == "boss" {
				return []string{"formal"}, nil
			}
			return []string{"warm", "formal"}, nil
		})
	p.Tool(abi.Tool{Name: "echo", Description: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			var args struct{ Text string }
			if err := json.Unmarshal(r.Arguments, &args); err != nil {
				return nil, err
			}
			return ToolText(args.Text), nil
		})
	p.Tool(abi.Tool{Name: "fail", Description: "fails"},
		func(*abi.CallToolRequest) (*abi.CallToolResult, error) {
			return nil, errors.New("it broke")
		})
	p.Tool(abi.Tool{Name: "panic", Description: "panics"},
		func(*abi.CallToolRequest) (*abi.CallToolResult, error) { panic("boom") })
	p.Request(abi.CapLog)
	return p
}

func TestHandle(t *testing.T) {
	p := testPlugin()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		op     abi.Op
		req    string
		status abi.Status
		want   string
	}{
		{"read static", abi.OpReadResource, `{"uri":"demo://hello","principal":{"id":"ann"}}`, abi.StatusOK,
			`{"contents":[{"uri":"demo://hello","mimeType":"text/plain","text":"hello ann"}]}`},
		{"read template", abi.OpReadResource, `{"uri":"demo://items/7","template":"demo://items/{id}","variables":{"id":"7"},"principal":{"id":"a"}}`, abi.StatusOK,
			`{"contents":[{"uri":"demo://items/7","text":"item 7"}]}`},
		{"read template not found", abi.OpReadResource, `{"uri":"demo://items/missing","template":"demo://items/{id}","variables":{"id":"missing"},"principal":{"id":"a"}}`, abi.StatusError,
			`{"code":"not_found","message":"no such item"}`},
		{"read via reader", abi.OpReadResource, `{"uri":"demo://dynamic","principal":{"id":"a"}}`, abi.StatusOK,
			`{"contents":[{"uri":"demo://dynamic","mimeType":"application/octet-stream","blob":"AAEC"}]}`},
		{"read unknown", abi.OpReadResource, `{"uri":"demo://nope","principal":{"id":"a"}}`, abi.StatusError,
			`{"code":"not_found","message":"unknown demo://nope"}`},
		{"read malformed", abi.OpReadResource, `{"uri":`, abi.StatusError,
			`{"code":"invalid_params","message":"malformed request: unexpected end of JSON input"}`},
		{"list first page", abi.OpListResources, `{"limit":10,"principal":{"id":"a"}}`, abi.StatusOK,
			`{"resources":[{"uri":"demo://dynamic","name":"dynamic"}],"nextCursor":"page2"}`},
		{"list second page", abi.OpListResources, `{"cursor":"page2","limit":10,"principal":{"id":"a"}}`, abi.StatusOK,
			`{"resources":[{"uri":"demo://other","name":"other"}]}`},
		{"prompt", abi.OpGetPrompt, `{"name":"greet","arguments":{"who":"Bo"},"principal":{"id":"a"}}`, abi.StatusOK,
			`{"description":"a greeting","messages":[{"role":"user","content":{"type":"text","text":"Greet Bo"}}]}`},
		{"prompt missing required", abi.OpGetPrompt, `{"name":"greet","arguments":{"tone":"x"},"principal":{"id":"a"}}`, abi.StatusError,
			`{"code":"invalid_params","message":"prompt \"greet\": missing required argument \"who\""}`},
		{"prompt unknown", abi.OpGetPrompt, `{"name":"nope","principal":{"id":"a"}}`, abi.StatusError,
			`{"code":"not_found","message":"prompt \"nope\" not found"}`},
		{"tool", abi.OpCallTool, `{"name":"echo","arguments":{"text":"hi <b>"},"principal":{"id":"a"}}`, abi.StatusOK,
			`{"content":[{"type":"text","text":"hi <b>"}]}`},
		{"tool missing required", abi.OpCallTool, `{"name":"echo","arguments":{},"principal":{"id":"a"}}`, abi.StatusOK,
			`{"content":[{"type":"text","text":"missing required argument \"text\""}],"isError":true}`},
		{"tool args not object", abi.OpCallTool, `{"name":"echo","arguments":[1],"principal":{"id":"a"}}`, abi.StatusError,
			`{"code":"invalid_params","message":"tool \"echo\": arguments must be a JSON object"}`},
		{"tool error", abi.OpCallTool, `{"name":"fail","principal":{"id":"a"}}`, abi.StatusOK,
			`{"content":[{"type":"text","text":"it broke"}],"isError":true}`},
		{"tool panic", abi.OpCallTool, `{"name":"panic","principal":{"id":"a"}}`, abi.StatusError,
			`{"code":"internal","message":"panic in call_tool handler: boom"}`},
		{"tool unknown", abi.OpCallTool, `{"name":"nope","principal":{"id":"a"}}`, abi.StatusError,
			`{"code":"not_found","message":"tool \"nope\" not found"}`},
		{"complete prompt with context", abi.OpComplete, `{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"tone","value":""},"arguments":{"who":"boss"},"principal":{"id":"a"}}`, abi.StatusOK,
			`{"completion":{"values":["formal"],"total":1}}`},
		{"complete template capped", abi.OpComplete, `{"ref":{"type":"ref/resource","uri":"demo://items/{id}"},"argument":{"name":"id","value":""},"principal":{"id":"a"}}`, abi.StatusOK,
			func() string {
				vals := make([]string, 100)
				for i := range vals {
					vals[i] = fmt.Sprintf("%q", fmt.Sprint(i))
				}
				return `{"completion":{"values":[` + strings.Join(vals, ",") + `],"total":150,"hasMore":true}}`
			}()},
		{"complete template prefix", abi.OpComplete, `{"ref":{"type":"ref/resource","uri":"demo://items/{id}"},"argument":{"name":"id","value":"14"},"principal":{"id":"a"}}`, abi.StatusOK,
			`{"completion":{"values":["14","140","141","142","143","144","145","146","147","148","149"],"total":11}}`},
		{"complete unknown argument", abi.OpComplete, `{"ref":{"type":"ref/resource","uri":"demo://items/{id}"},"argument":{"name":"zzz","value":""},"principal":{"id":"a"}}`, abi.StatusOK,
			`{"completion":{"values":[],"total":0}}`},
		{"complete unknown ref", abi.OpComplete, `{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"x","value":""},"principal":{"id":"a"}}`, abi.StatusError,
			`{"code":"not_found","message":"prompt \"nope\" not found"}`},
		{"complete bad ref type", abi.OpComplete, `{"ref":{"type":"ref/other"},"argument":{"name":"x","value":""},"principal":{"id":"a"}}`, abi.StatusError,
			`{"code":"invalid_params","message":"unknown completion ref type \"ref/other\""}`},
		{"unknown op", abi.Op(99), `{}`, abi.StatusError,
			`{"code":"invalid_params","message":"unknown operation 99"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := p.Handle(tt.op, []byte(tt.req))
			if status != tt.status {
				t.Errorf("status = %d, want %d (response %s)", status, tt.status, out)
			}
			if diff := cmp.Diff(tt.want, string(out)); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	p := testPlugin()
	status, out := p.Handle(abi.OpDescribe, nil)
	if status != abi.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	var m abi.Manifest
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Name, Version  string
		ABI            int
		Schemes        []string
		Resources      int
		Templates      []abi.Template
		Prompts        []abi.Prompt
		Tools          []string
		Caps           []string
		ListsResources bool
	}
	got := summary{Name: m.Name, Version: m.Version, ABI: m.ABI, Schemes: m.Schemes, Resources: len(m.Resources),
		Templates: m.Templates, Prompts: m.Prompts, Caps: m.Capabilities, ListsResources: m.ListsResources}
	for _, tool := range m.Tools {
		got.Tools = append(got.Tools, tool.Name+" "+string(tool.InputSchema))
	}
	want := summary{Name: "demo", Version: "1.0.0", ABI: abi.Major, Schemes: []string{"demo"}, Resources: 1,
		Templates: []abi.Template{{URITemplate: "demo://items/{id}", Name: "item", Complete: []string{"id"}}},
		Prompts: []abi.Prompt{{Name: "greet", Arguments: []abi.PromptArgument{{Name: "who", Required: true}, {Name: "tone"}},
			Complete: []string{"who", "tone"}}},
		Tools: []string{
			`echo {"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
			`fail {"type":"object"}`,
			`panic {"type":"object"}`,
		},
		Caps: []string{"log"}, ListsResources: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	read := func(*abi.ReadResourceRequest) (*abi.ReadResourceResult, error) { return nil, nil }
	tests := []struct {
		name  string
		build func(p *Plugin)
		want  string // substring of the error; "" for valid
	}{
		{"valid", func(p *Plugin) { p.Scheme("x") }, ""},
		{"bad name", func(p *Plugin) { p.m.Name = "Bad Name" }, "plugin name"},
		{"no version", func(p *Plugin) { p.m.Version = "" }, "version is empty"},
		{"resource outside scheme", func(p *Plugin) {
			p.Scheme("x")
			p.Resource(abi.Resource{URI: "y://a", Name: "a"}, read)
		}, `resource "y://a" is outside`},
		{"duplicate resource", func(p *Plugin) {
			p.Scheme("x")
			p.Resource(abi.Resource{URI: "x://a", Name: "a"}, read)
			p.Resource(abi.Resource{URI: "x://a", Name: "a"}, read)
		}, "declared twice"},
		{"nil handler", func(p *Plugin) { p.Scheme("x"); p.Resource(abi.Resource{URI: "x://a", Name: "a"}, nil) }, "no read handler"},
		{"bad completable variable", func(p *Plugin) {
			p.Scheme("x")
			p.Template(abi.Template{URITemplate: "x://{a}", Name: "t", Complete: []string{"b"}}, read,
				func(*abi.CompleteRequest) ([]string, error) { return nil, nil })
		}, `completable variable "b"`},
		{"complete without handler", func(p *Plugin) {
			p.Prompt(abi.Prompt{Name: "p", Arguments: []abi.PromptArgument{{Name: "a"}}, Complete: []string{"a"}},
				func(*abi.GetPromptRequest) (*abi.GetPromptResult, error) { return nil, nil }, nil)
		}, "no completion handler"},
		{"bad tool name", func(p *Plugin) {
			p.Tool(abi.Tool{Name: "has space"}, func(*abi.CallToolRequest) (*abi.CallToolResult, error) { return nil, nil })
		}, "tool name"},
		{"tool schema not object", func(p *Plugin) {
			p.Tool(abi.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"string"}`)},
				func(*abi.CallToolRequest) (*abi.CallToolResult, error) { return nil, nil })
		}, `must have type "object"`},
		{"task support", func(p *Plugin) {
			p.Tool(abi.Tool{Name: "t", Execution: &abi.ToolExecution{TaskSupport: "sometimes"}},
				func(*abi.CallToolRequest) (*abi.CallToolResult, error) { return nil, nil })
		}, `tool "t": execution.taskSupport "sometimes" is not forbidden, optional or required`},
		{"task deadline without tasks", func(p *Plugin) {
			p.Tool(abi.Tool{Name: "t", TaskDeadlineMs: 1000}, func(*abi.CallToolRequest) (*abi.CallToolResult, error) { return nil, nil })
		}, "InputFirst and TaskDeadlineMs need task support"},
		{"task deadline over a day", func(p *Plugin) {
			p.Tool(abi.Tool{Name: "t", Execution: &abi.ToolExecution{TaskSupport: abi.TaskRequired}, TaskDeadlineMs: 86400001},
				func(*abi.CallToolRequest) (*abi.CallToolResult, error) { return nil, nil })
		}, "TaskDeadlineMs 86400001 is not between 1 and 86400000"},
		{"task tool", func(p *Plugin) {
			p.Tool(abi.Tool{Name: "t", Execution: &abi.ToolExecution{TaskSupport: abi.TaskOptional}, InputFirst: true, TaskDeadlineMs: 300000},
				func(*abi.CallToolRequest) (*abi.CallToolResult, error) { return nil, nil })
		}, ""},
		{"unknown capability", func(p *Plugin) { p.Request("root") }, `unknown capability "root"`},
		{"reader without scheme", func(p *Plugin) { p.Reader(read) }, "needs a scheme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New("x", "1")
			tt.build(p)
			err := p.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.want)
			}
			if tt.want != "" {
				// An invalid plugin refuses every call with the reason.
				status, out := p.Handle(abi.OpDescribe, nil)
				if status != abi.StatusError || !strings.Contains(string(out), "internal") {
					t.Errorf("Handle on invalid plugin = %d %s, want an internal error", status, out)
				}
			}
		})
	}
}

func TestTemplateVariables(t *testing.T) {
	tests := []struct {
		tmpl string
		want []string
	}{
		{"repo://{owner}/{repo}/issues/{number}", []string{"owner", "repo", "number"}},
		{"file:///{+path}", []string{"path"}},
		{"x://a{?q,lang:2}{&page*}", []string{"q", "lang", "page"}},
		{"x://{a}/{a}", []string{"a"}},
		{"x://plain", nil},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, TemplateVariables(tt.tmpl)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestServe(t *testing.T) {
	prev := served
	defer func() { served = prev }()
	served = nil
	if status, out := call(abi.OpDescribe, nil); status != abi.StatusError || !strings.Contains(string(out), "no plugin served") {
		t.Errorf("call without Serve = %d %s", status, out)
	}
	Serve(testPlugin())
	if status, out := call(abi.OpDescribe, nil); status != abi.StatusOK || !strings.Contains(string(out), `"name":"demo"`) {
		t.Errorf("call after Serve = %d %s", status, out)
	}
}

func BenchmarkHandleRead(b *testing.B) {
	p := testPlugin()
	req := []byte(`{"uri":"demo://items/42","template":"demo://items/{id}","variables":{"id":"42"},"principal":{"id":"ann","groups":["dev"]}}`)
	b.ReportAllocs()
	for b.Loop() {
		if status, _ := p.Handle(abi.OpReadResource, req); status != abi.StatusOK {
			b.Fatal("read failed")
		}
	}
}

func BenchmarkHandleTool(b *testing.B) {
	p := testPlugin()
	req := []byte(`{"name":"echo","arguments":{"text":"hello"},"principal":{"id":"ann"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if status, _ := p.Handle(abi.OpCallTool, req); status != abi.StatusOK {
			b.Fatal("call failed")
		}
	}
}

// FuzzHandle feeds arbitrary requests to every operation: the SDK must
// answer each with a status and a JSON payload, never panic.
func FuzzHandle(f *testing.F) {
	f.Add(uint8(3), []byte(`{"uri":"demo://hello","principal":{"id":"a"}}`))
	f.Add(uint8(5), []byte(`{"name":"echo","arguments":{"text":1}}`))
	f.Add(uint8(6), []byte(`{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"tone"}}`))
	f.Add(uint8(2), []byte(`{"limit":-1}`))
	f.Add(uint8(4), []byte(`null`))
	p := testPlugin()
	f.Fuzz(func(t *testing.T, op uint8, req []byte) {
		status, out := p.Handle(abi.Op(op%8), req)
		if status != abi.StatusOK && status != abi.StatusError {
			t.Fatalf("status %d", status)
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON response %q", out)
		}
	})
}

// TestRequire: Require requests a capability and marks it required, once;
// Request alone leaves it optional; an unknown name is refused.
func TestRequire(t *testing.T) {
	p := New("x", "1")
	p.Request(abi.CapLog)
	p.Require(abi.CapFiles, abi.CapFiles)
	p.Require(abi.CapLog)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	status, out := p.Handle(abi.OpDescribe, nil)
	var m abi.Manifest
	if err := json.Unmarshal(out, &m); status != abi.StatusOK || err != nil {
		t.Fatalf("describe = %d %s (%v)", status, out, err)
	}
	if want := []string{abi.CapLog, abi.CapFiles}; !slices.Equal(m.Capabilities, want) {
		t.Errorf("capabilities %v, want %v", m.Capabilities, want)
	}
	if want := []string{abi.CapFiles, abi.CapLog}; !slices.Equal(m.RequiredCapabilities, want) {
		t.Errorf("requiredCapabilities %v, want %v", m.RequiredCapabilities, want)
	}
	q := New("y", "1")
	q.Require("root")
	if err := q.Validate(); err == nil || !strings.Contains(err.Error(), `unknown capability "root"`) {
		t.Errorf("Validate() = %v, want the unknown capability named", err)
	}
}

// TestDescribeTaskFields: a tool's task support, input first and task
// deadline (ABI 1.3, 1.4) reach the manifest as the host reads them.
func TestDescribeTaskFields(t *testing.T) {
	p := New("x", "1")
	p.Tool(abi.Tool{Name: "scan", Execution: &abi.ToolExecution{TaskSupport: abi.TaskOptional}, InputFirst: true, TaskDeadlineMs: 300000},
		func(*abi.CallToolRequest) (*abi.CallToolResult, error) { return nil, nil })
	status, out := p.Handle(abi.OpDescribe, nil)
	want := `"tools":[{"name":"scan","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"},"inputFirst":true,"taskDeadlineMs":300000}]`
	if status != abi.StatusOK || !strings.Contains(string(out), want) {
		t.Fatalf("describe = %d %s, want it to contain %s", status, out, want)
	}
}
