// Command example is the Go port of the example provider that every corral
// SDK ports (docs/plugins.md §2): a static resource, a template with
// completion, a prompt with a required argument and an embedded resource,
// a tool, a kv-backed counter with a notification, an input_required tool
// and a probe of the other capabilities. interop's TestJudge checks it over
// the wire.
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o example.wasm .
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
)

func main() {}

func init() { corral.Serve(newPlugin()) }

const (
	readmeURI   = "example://readme"
	counterURI  = "example://counter"
	greetingURI = "example://greetings/{lang}"
	counterKey  = "counter"
	plain       = "text/plain"
	readmeText  = "The corral example provider — one provider, four languages."
	noArguments = `{"type":"object","properties":{}}`
)

// languages are the greetings, in the order completions list them.
var languages = []struct{ code, greeting string }{
	{"de", "Hallo"}, {"en", "Hello"}, {"es", "Hola"}, {"fr", "Bonjour"}, {"it", "Ciao"},
}

func greeting(code string) (string, bool) {
	for _, l := range languages {
		if l.code == code {
			return l.greeting, true
		}
	}
	return "", false
}

func newPlugin() *corral.Plugin {
	p := corral.New("example", "1.0.0")
	p.Title("Example provider")
	p.Scheme("example")
	p.Require(abi.CapKV)
	p.Request(abi.CapNotify, abi.CapLog, abi.CapConfig, abi.CapFiles, abi.CapHTTP)

	p.Resource(abi.Resource{URI: readmeURI, Name: "readme", MimeType: plain}, readReadme)
	p.Resource(abi.Resource{URI: counterURI, Name: "counter", MimeType: plain}, readCounter)
	p.Template(abi.Template{URITemplate: greetingURI, Name: "greeting", MimeType: plain, Complete: []string{"lang"}},
		readGreeting, completeLang)
	p.Prompt(abi.Prompt{Name: "greet", Description: "Greet someone",
		Arguments: []abi.PromptArgument{{Name: "name", Required: true}, {Name: "lang"}},
		Complete:  []string{"lang"}}, greet, completeLang)
	p.Tool(abi.Tool{Name: "shout", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)}, shout)
	p.Tool(abi.Tool{Name: "increment", InputSchema: json.RawMessage(noArguments)}, increment)
	p.Tool(abi.Tool{Name: "reset", InputSchema: json.RawMessage(noArguments)}, reset)
	p.Tool(abi.Tool{Name: "probe", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"path":{"type":"string"},"url":{"type":"string"}},"required":["path","url"]}`),
		Execution: &abi.ToolExecution{TaskSupport: abi.TaskOptional}, TaskDeadlineMs: 60000}, probe)
	return p
}

func readReadme(r *abi.ReadResourceRequest) (*abi.ReadResourceResult, error) {
	return corral.Contents(corral.TextContents(r.URI, plain, readmeText)), nil
}

// count reads the counter; a missing key is 0.
func count() (int, error) {
	v, err := corral.KV.Get(counterKey)
	switch {
	case errors.Is(err, corral.ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, err
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return 0, fmt.Errorf("counter %q: %w", v, err)
	}
	return n, nil
}

func readCounter(r *abi.ReadResourceRequest) (*abi.ReadResourceResult, error) {
	n, err := count()
	if err != nil {
		return nil, err
	}
	return corral.Contents(corral.TextContents(r.URI, plain, strconv.Itoa(n))), nil
}

func readGreeting(r *abi.ReadResourceRequest) (*abi.ReadResourceResult, error) {
	g, ok := greeting(r.Variables["lang"])
	if !ok {
		return nil, corral.NotFound("no greeting at " + r.URI)
	}
	return corral.Contents(corral.TextContents(r.URI, plain, g)), nil
}

func completeLang(r *abi.CompleteRequest) ([]string, error) {
	values := []string{}
	for _, l := range languages {
		if strings.HasPrefix(l.code, r.Argument.Value) {
			values = append(values, l.code)
		}
	}
	return values, nil
}

func greet(r *abi.GetPromptRequest) (*abi.GetPromptResult, error) {
	lang := r.Arguments["lang"]
	if lang == "" {
		lang = "en"
	}
	g, ok := greeting(lang)
	if !ok {
		return nil, corral.InvalidParams("unknown language: " + lang)
	}
	return corral.Messages("",
		corral.UserMessage(corral.Text("Say "+g+" to "+r.Arguments["name"]+".")),
		corral.UserMessage(corral.EmbeddedResource(corral.TextContents("example://greetings/"+lang, plain, g))),
	), nil
}

func shout(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
	var args struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(r.Arguments, &args); err != nil || args.Text == nil {
		return corral.ToolError("text must be a string"), nil
	}
	b := []byte(*args.Text)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return corral.ToolText(string(b)), nil
}

func increment(*abi.CallToolRequest) (*abi.CallToolResult, error) {
	n, err := count()
	if err != nil {
		return corral.ToolError("kv: " + err.Error()), nil
	}
	n++
	if err := corral.KV.Set(counterKey, []byte(strconv.Itoa(n))); err != nil {
		return corral.ToolError("kv: " + err.Error()), nil
	}
	_ = corral.NotifyResourceUpdated(counterURI) // a dropped notification does not undo the count
	res := corral.ToolText("count: " + strconv.Itoa(n))
	res.StructuredContent = json.RawMessage(`{"count":` + strconv.Itoa(n) + `}`)
	return res, nil
}

func reset(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
	answer, ok := corral.Elicitation(r.Input, "confirm")
	if !ok {
		return nil, corral.NeedInput("", map[string]abi.InputRequest{
			"confirm": corral.Elicit("Reset the counter?", map[string]any{
				"type": "object", "properties": map[string]any{"ok": map[string]string{"type": "boolean"}}, "required": []string{"ok"},
			}),
		})
	}
	if answer.Action != "accept" || answer.Content["ok"] != true {
		return corral.ToolText("counter kept"), nil
	}
	if err := corral.KV.Delete(counterKey); err != nil {
		return corral.ToolError("kv: " + err.Error()), nil
	}
	return corral.ToolText("counter reset"), nil
}

func probe(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
	var args struct {
		Path string `json:"path"`
		URL  string `json:"url"`
	}
	if err := json.Unmarshal(r.Arguments, &args); err != nil {
		return corral.ToolError("arguments: " + err.Error()), nil
	}
	fail := func(step string, err error) (*abi.CallToolResult, error) {
		return corral.ToolError(step + ": " + err.Error()), nil
	}

	_ = corral.Progress(1, 3, "config")
	motto, err := corral.Config.Get("motto")
	if err != nil {
		return fail("config", err)
	}

	_ = corral.Progress(2, 3, "files")
	roots, err := corral.Files.Roots()
	if err != nil {
		return fail("files", err)
	}
	info, err := corral.Files.Stat(args.Path)
	if err != nil {
		return fail("files", err)
	}
	entries, err := corral.Files.List(path.Dir(args.Path))
	if err != nil {
		return fail("files", err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	data, err := corral.Files.Read(args.Path)
	if err != nil {
		return fail("files", err)
	}

	_ = corral.Progress(3, 3, "http")
	resp, err := corral.HTTP.Get(args.URL, nil)
	if err != nil {
		return fail("http", err)
	}
	_ = corral.Log(abi.LogInfo, "probe: done")

	return corral.ToolText(strings.Join([]string{
		"motto: " + motto,
		"roots: " + strconv.Itoa(len(roots)),
		"files: " + strings.Join(names, ","),
		"size: " + strconv.FormatInt(info.Size, 10),
		"file: " + string(data),
		"http: " + strconv.Itoa(resp.Status) + " " + string(resp.Body),
	}, "\n")), nil
}
