package plugin

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/internal/jsonread"
)

// manifestSamples are describe responses of every shape decodeManifest
// reads, accepted and refused.
func manifestSamples() []string {
	size := int64(42)
	rich, _ := json.Marshal(abi.Manifest{
		Name: "rich", Version: "1.2.3", ABI: 1, Title: "T \u00e9\u4e16", Description: "d\n\"q\"",
		Schemes:   []string{"rich", "r+x"},
		Resources: []abi.Resource{{URI: "rich://a", Name: "a", Title: "A", Description: "x", MimeType: "text/plain", Size: &size, Annotations: json.RawMessage(`{"audience":["user"],"priority":0.5}`), Icons: json.RawMessage(`[{"src":"https://x/i.png"}]`)}},
		Templates: []abi.Template{{URITemplate: "rich://t/{id}", Name: "t", MimeType: "text/plain", Complete: []string{"id"}}},
		Prompts:   []abi.Prompt{{Name: "p", Arguments: []abi.PromptArgument{{Name: "x", Required: true, Title: "X"}, {Name: "y"}}, Complete: []string{"x"}}},
		Tools: []abi.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`), OutputSchema: json.RawMessage(`{"type":"object"}`),
			Execution: &abi.ToolExecution{TaskSupport: abi.TaskOptional}, InputFirst: true, TaskDeadlineMs: 90000}},
		Capabilities: []string{"log", "kv"}, RequiredCapabilities: []string{"kv"}, ListsResources: true,
	})
	var many strings.Builder
	many.WriteString(`{"name":"many","abi":1,"schemes":["m"],"resources":[`)
	for i := range 300 {
		if i > 0 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `{"uri":"m://item/%04d","name":"item-%04d","mimeType":"text/plain","size":%d}`, i, i, i*7)
	}
	many.WriteString(`]}`)
	return []string{
		string(rich), many.String(),
		`{"name":"a","abi":1}`, `{}`, `null`, ` {"name":"a"} `,
		`{"name":null,"abi":null,"schemes":null,"resources":null,"tools":null,"listsResources":null}`,
		`{"schemes":[],"resources":[],"templates":[],"prompts":[],"tools":[],"capabilities":[]}`,
		`{"schemes":[null,"x"],"resources":[null,{"uri":"x://a","size":null,"annotations":null,"icons":null}]}`,
		`{"tools":[{"name":"t","inputSchema":null,"execution":null}]}`,
		`{"tools":[{"name":"t","inputSchema":{},"execution":{}}]}`,
		`{"tools":[{"name":"t","inputSchema":{},"execution":{"taskSupport":"required","other":1}}]}`,
		`{"name":"a","unknown":{"deep":[1,2,{"x":null}]},"x-y":"z"}`,
		`{"name":"a\u0062\n\ud83d\ude00"}`,
		`{"abi":-0}`, `{"abi":9223372036854775807}`,
		// refused, by both readers
		`{"abi":1.0}`, `{"abi":1e0}`, `{"abi":"1"}`, `{"abi":9223372036854775808}`, `{"abi":true}`,
		`{"resources":[{"size":1.5}]}`, `{"tools":[{"taskDeadlineMs":"9"}]}`,
		`{"name":1}`, `{"schemes":"x"}`, `{"schemes":[1]}`, `{"resources":{}}`, `{"resources":["x"]}`,
		`{"listsResources":"yes"}`, `{"tools":[{"execution":"optional"}]}`, `{"prompts":[{"arguments":[{"required":1}]}]}`,
		`{"name":"a","name":"b"}`, `{"Name":"a"}`, `{"tools":[{"name":"t","Name":"u"}]}`,
		`{"prompts":[{"arguments":[{"name":"a","name":"b"}]}]}`, `{"x":1,"x":2}`,
		"{\"name\":\"\xff\"}", "{\"tools\":[{\"inputSchema\":{\"d\":\"\xfe\"}}]}",
		`[]`, `"x"`, `{"name":"a"} {}`, `{"name":"a",}`, `{"name":"a"`, ``, `nope`,
		`{"tools":[{"inputSchema":{"type":"object","type":"string"}}]}`,
	}
}

// TestDecodeManifestAgrees: decodeManifest accepts exactly what
// jsonread.Unmarshal accepts into an abi.Manifest, and fills the same
// values.
func TestDecodeManifestAgrees(t *testing.T) {
	for _, in := range manifestSamples() {
		name := in
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			checkDecodeAgrees(t, []byte(in))
		})
	}
}

// FuzzDecodeManifest compares decodeManifest with jsonread.Unmarshal on
// mutated describe responses.
func FuzzDecodeManifest(f *testing.F) {
	for _, in := range manifestSamples() {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDecodeAgrees(t, b) })
}

func checkDecodeAgrees(t *testing.T, b []byte) {
	t.Helper()
	got, err := decodeManifest(b)
	want := new(abi.Manifest)
	werr := jsonread.Unmarshal(b, want)
	switch {
	case (err == nil) != (werr == nil):
		t.Fatalf("%q: decodeManifest: %v; jsonread.Unmarshal: %v", b, err, werr)
	case err == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("%q:\ndecodeManifest     %+v\njsonread.Unmarshal %+v", b, got, want)
	}
}

func BenchmarkDecodeManifest(b *testing.B) {
	in := []byte(manifestSamples()[1]) // 300 resources
	for _, bc := range []struct {
		name   string
		decode func([]byte) error
	}{
		{"decodeManifest", func(b []byte) error { _, err := decodeManifest(b); return err }},
		{"jsonread.Unmarshal", func(b []byte) error { return jsonread.Unmarshal(b, new(abi.Manifest)) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if err := bc.decode(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
