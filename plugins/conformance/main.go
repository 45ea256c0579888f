// Command conformance is a corral plugin serving the fixtures the official
// MCP conformance suite (@modelcontextprotocol/conformance) expects of a
// server under test: test:// resources and template, the test_* prompts
// and tools, and completions for their arguments.
//
// The test_input_required_result_* fixtures and test_missing_capability
// ask the client for input with input_required (mrtr.go). Progress and log messages go through the progress and
// log host functions to the request's own stream.
package main

import (
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
)

func main() {}

func init() { corral.Serve(newPlugin()) }

// pixel is a 1×1 PNG.
//
//go:embed pixel.png
var pixel []byte

// silence is a tiny mono 8 kHz 16-bit WAV file holding one silent sample.
var silence = wav(8000, []int16{0})

// wav encodes samples as a PCM WAV file.
func wav(rate uint32, samples []int16) []byte {
	data := make([]byte, 0, 44+2*len(samples))
	le := binary.LittleEndian
	data = append(data, "RIFF"...)
	data = le.AppendUint32(data, uint32(36+2*len(samples)))
	data = append(data, "WAVEfmt "...)
	data = le.AppendUint32(data, 16)     // fmt chunk size
	data = le.AppendUint16(data, 1)      // PCM
	data = le.AppendUint16(data, 1)      // mono
	data = le.AppendUint32(data, rate)   // sample rate
	data = le.AppendUint32(data, rate*2) // byte rate
	data = le.AppendUint16(data, 2)      // block align
	data = le.AppendUint16(data, 16)     // bits per sample
	data = append(data, "data"...)
	data = le.AppendUint32(data, uint32(2*len(samples)))
	for _, s := range samples {
		data = le.AppendUint16(data, uint16(s))
	}
	return data
}

const (
	staticTextURI   = "test://static-text"
	staticBinaryURI = "test://static-binary"
	watchedURI      = "test://watched-resource"
	templateURI     = "test://template/{id}/data"
)

func newPlugin() *corral.Plugin {
	p := corral.New("conformance", "1.0.0")
	p.Title("MCP conformance fixtures")
	p.Description("Resources, prompts and tools expected by the official MCP conformance suite.")
	p.Scheme("test")
	p.Request(abi.CapNotify, abi.CapLog)

	p.Resource(abi.Resource{URI: staticTextURI, Name: "static-text", Title: "Static Text Resource",
		Description: "A static text resource for testing", MimeType: "text/plain"},
		func(r *abi.ReadResourceRequest) (*abi.ReadResourceResult, error) {
			return corral.Contents(corral.TextContents(r.URI, "text/plain", "This is the content of the static text resource.")), nil
		})
	p.Resource(abi.Resource{URI: staticBinaryURI, Name: "static-binary", Title: "Static Binary Resource",
		Description: "A static binary resource (image) for testing", MimeType: "image/png"},
		func(r *abi.ReadResourceRequest) (*abi.ReadResourceResult, error) {
			return corral.Contents(corral.BlobContents(r.URI, "image/png", pixel)), nil
		})
	p.Resource(abi.Resource{URI: watchedURI, Name: "watched-resource", Title: "Watched Resource",
		Description: "A resource clients can subscribe to", MimeType: "text/plain"},
		func(r *abi.ReadResourceRequest) (*abi.ReadResourceResult, error) {
			return corral.Contents(corral.TextContents(r.URI, "text/plain", "Watched resource content")), nil
		})
	p.Template(abi.Template{URITemplate: templateURI, Name: "template", Title: "Resource Template",
		Description: "A resource template with parameter substitution", MimeType: "application/json"},
		readTemplate, completeFrom(templateIDs))
	p.Reader(readTemplate) // template URIs the host did not match itself

	p.Prompt(abi.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt",
		Description: "A simple prompt without arguments"},
		func(*abi.GetPromptRequest) (*abi.GetPromptResult, error) {
			return corral.Messages("A simple test prompt",
				corral.UserMessage(corral.Text("This is a simple prompt for testing."))), nil
		}, nil)
	p.Prompt(abi.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments",
		Description: "A prompt with required arguments",
		Arguments: []abi.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		}},
		func(r *abi.GetPromptRequest) (*abi.GetPromptResult, error) {
			text := fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", r.Arguments["arg1"], r.Arguments["arg2"])
			return corral.Messages("A prompt with arguments", corral.UserMessage(corral.Text(text))), nil
		}, completeFrom(argumentWords))
	p.Prompt(abi.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource",
		Description: "A prompt that includes an embedded resource",
		Arguments:   []abi.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		promptWithEmbeddedResource, completeFrom(resourceURIs))
	p.Prompt(abi.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image",
		Description: "A prompt that includes image content"},
		func(*abi.GetPromptRequest) (*abi.GetPromptResult, error) {
			return corral.Messages("A prompt with an image",
				corral.UserMessage(corral.Image(pixel, "image/png")),
				corral.UserMessage(corral.Text("Please analyze the image above."))), nil
		}, nil)

	for _, t := range tools {
		p.Tool(t.def, t.call)
	}
	addMRTR(p)
	for _, t := range askingTools {
		p.Tool(t.def, t.call)
	}
	addHeaderTools(p)
	for _, t := range taskTools {
		p.Tool(t.def, t.call)
	}
	return p
}

// readTemplate serves test://template/{id}/data, taking id from the host's
// match or, failing that, from the URI itself.
func readTemplate(r *abi.ReadResourceRequest) (*abi.ReadResourceResult, error) {
	id, ok := r.Variables["id"]
	if !ok {
		id, ok = templateID(r.URI)
	}
	if !ok || id == "" {
		return nil, corral.NotFound("resource not found: " + r.URI)
	}
	return templateContents(r.URI, id)
}

// templateID extracts id from a URI of the form test://template/{id}/data.
func templateID(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, "test://template/")
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, "/data")
	return id, ok && !strings.Contains(id, "/")
}

func templateContents(uri, id string) (*abi.ReadResourceResult, error) {
	body, err := json.Marshal(struct {
		ID           string `json:"id"`
		TemplateTest bool   `json:"templateTest"`
		Data         string `json:"data"`
	}{id, true, "Data for ID: " + id})
	if err != nil {
		return nil, err
	}
	return corral.Contents(corral.TextContents(uri, "application/json", string(body))), nil
}

func promptWithEmbeddedResource(r *abi.GetPromptRequest) (*abi.GetPromptResult, error) {
	uri := r.Arguments["resourceUri"]
	if !strings.HasPrefix(uri, "test://") {
		return nil, corral.InvalidParams("resourceUri must be a test:// URI")
	}
	return corral.Messages("A prompt with an embedded resource",
		corral.UserMessage(corral.EmbeddedResource(corral.TextContents(uri, "text/plain", "Embedded resource content for testing."))),
		corral.UserMessage(corral.Text("Please process the embedded resource above."))), nil
}

// Completion candidates.
var (
	templateIDs   = []string{"1", "2", "3", "42", "123"}
	argumentWords = []string{"paris", "park", "party", "test", "testValue1", "testValue2", "value"}
	resourceURIs  = []string{staticBinaryURI, staticTextURI, "test://template/123/data", watchedURI}
)

// completeFrom completes any argument with the candidates that start with
// the typed value, case-insensitively, in sorted order.
func completeFrom(candidates []string) corral.CompleteFunc {
	return func(r *abi.CompleteRequest) ([]string, error) {
		prefix := strings.ToLower(r.Argument.Value)
		var out []string
		for _, c := range candidates {
			if strings.HasPrefix(strings.ToLower(c), prefix) {
				out = append(out, c)
			}
		}
		sort.Strings(out)
		return out, nil
	}
}

type tool struct {
	def  abi.Tool
	call corral.ToolFunc
}

// text returns a handler answering with one text block.
func text(s string) corral.ToolFunc {
	return func(*abi.CallToolRequest) (*abi.CallToolResult, error) { return corral.ToolText(s), nil }
}

// jsonSchema202012 exercises JSON Schema 2020-12 keywords, which the host
// must pass through verbatim.
const jsonSchema202012 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
	`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
	`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
	`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},` +
	`"additionalProperties":false}`

var tools = []tool{
	{abi.Tool{Name: "test_simple_text", Description: "Tests simple text content response"},
		text("This is a simple text response for testing.")},
	{abi.Tool{Name: "test_image_content", Description: "Tests image content response"},
		func(*abi.CallToolRequest) (*abi.CallToolResult, error) {
			return corral.ToolResult(corral.Image(pixel, "image/png")), nil
		}},
	{abi.Tool{Name: "test_audio_content", Description: "Tests audio content response"},
		func(*abi.CallToolRequest) (*abi.CallToolResult, error) {
			return corral.ToolResult(corral.Audio(silence, "audio/wav")), nil
		}},
	{abi.Tool{Name: "test_embedded_resource", Description: "Tests embedded resource content response"},
		func(*abi.CallToolRequest) (*abi.CallToolResult, error) {
			return corral.ToolResult(corral.EmbeddedResource(
				corral.TextContents("test://embedded-resource", "text/plain", "This is an embedded resource content."))), nil
		}},
	{abi.Tool{Name: "test_multiple_content_types", Description: "Tests response with multiple content types (text, image, resource)"},
		func(*abi.CallToolRequest) (*abi.CallToolResult, error) {
			return corral.ToolResult(
				corral.Text("Multiple content types test:"),
				corral.Image(pixel, "image/png"),
				corral.EmbeddedResource(corral.TextContents("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`)),
			), nil
		}},
	{abi.Tool{Name: "test_error_handling", Description: "Tests error response handling"},
		func(*abi.CallToolRequest) (*abi.CallToolResult, error) {
			return corral.ToolError("This tool intentionally returns an error for testing"), nil
		}},
	{abi.Tool{Name: "test_tool_with_logging", Description: "Tests tool that emits log messages during execution"},
		func(*abi.CallToolRequest) (*abi.CallToolResult, error) {
			for _, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if err := corral.Log(abi.LogInfo, m); err != nil {
					return nil, err
				}
			}
			return corral.ToolText("Tool with logging executed successfully"), nil
		}},
	{abi.Tool{Name: "test_tool_with_progress", Description: "Tests tool that reports progress notifications"},
		withProgress},
	{abi.Tool{Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)",
		InputSchema: json.RawMessage(jsonSchema202012)},
		func(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
			return corral.ToolText("JSON Schema 2020-12 tool called with: " + string(r.Arguments)), nil
		}},
	{abi.Tool{Name: "test_streaming_elicitation", Description: "Answers with a plain result: the response stream carries no independent JSON-RPC requests"},
		text("stream observed: result frames only, no top-level requests")},
	{abi.Tool{Name: "test_logging_tool", Description: "Logs one info line; the client hears it only when its request set a log level"},
		func(*abi.CallToolRequest) (*abi.CallToolResult, error) {
			if err := corral.Log(abi.LogInfo, "test_logging_tool executed"); err != nil {
				return nil, err
			}
			return corral.ToolText("Log attempted; the host forwards it only to a request that set a log level."), nil
		}},
	{abi.Tool{Name: "test_trigger_tool_change", Description: "Publishes notifications/tools/list_changed to listening clients"},
		func(*abi.CallToolRequest) (*abi.CallToolResult, error) {
			if err := corral.NotifyToolsListChanged(); err != nil {
				return nil, err
			}
			return corral.ToolText("tools_list_changed published"), nil
		}},
	{abi.Tool{Name: "test_trigger_prompt_change", Description: "Publishes notifications/prompts/list_changed to listening clients"},
		func(*abi.CallToolRequest) (*abi.CallToolResult, error) {
			if err := corral.NotifyPromptsListChanged(); err != nil {
				return nil, err
			}
			return corral.ToolText("prompts_list_changed published"), nil
		}},
}
