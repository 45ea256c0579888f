package catalog

import (
	"crypto/sha256"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
)

// fullManifest has every list of abi.Manifest one element long and every
// pointer set, so that every field is reachable.
func fullManifest() *abi.Manifest {
	size := int64(7)
	return &abi.Manifest{
		Name: "n", Version: "v", ABI: 1, Title: "t", Description: "d", Schemes: []string{"s"},
		Resources: []abi.Resource{{URI: "s://a", Name: "a", Title: "t", Description: "d", MimeType: "m", Size: &size,
			Annotations: json.RawMessage(`{}`), Icons: json.RawMessage(`[]`)}},
		Templates: []abi.Template{{URITemplate: "s://{x}", Name: "t", Title: "t", Description: "d", MimeType: "m",
			Annotations: json.RawMessage(`{}`), Icons: json.RawMessage(`[]`), Complete: []string{"x"}}},
		Prompts: []abi.Prompt{{Name: "p", Title: "t", Description: "d", Arguments: []abi.PromptArgument{{Name: "a", Title: "t", Description: "d"}},
			Icons: json.RawMessage(`[]`), Complete: []string{"a"}}},
		Tools: []abi.Tool{{Name: "t", Title: "t", Description: "d", InputSchema: json.RawMessage(`{}`), OutputSchema: json.RawMessage(`{}`),
			Annotations: json.RawMessage(`{}`), Icons: json.RawMessage(`[]`), Execution: &abi.ToolExecution{TaskSupport: "optional"}}},
		Capabilities: []string{"log"}, RequiredCapabilities: []string{"log"},
	}
}

func manifestSum(m *abi.Manifest) [32]byte {
	h := sha256.New()
	hashManifest(h, m)
	return [32]byte(h.Sum(nil))
}

// TestHashManifestCoversEveryField changes each field of abi.Manifest in
// turn, found by reflection (a field added to abi later is found too), and
// each list's length, and checks that the hash changes every time.
func TestHashManifestCoversEveryField(t *testing.T) {
	base := manifestSum(fullManifest())
	if manifestSum(fullManifest()) != base {
		t.Fatal("the hash of one manifest differs between two runs")
	}
	var paths [][]int
	var collect func(tp reflect.Type, path []int)
	collect = func(tp reflect.Type, path []int) {
		for tp.Kind() == reflect.Pointer {
			tp = tp.Elem()
		}
		switch {
		case tp.Kind() == reflect.Struct:
			for i := range tp.NumField() {
				collect(tp.Field(i).Type, append(clonePath(path), i))
			}
		case tp.Kind() == reflect.Slice && tp.Elem().Kind() == reflect.Struct:
			paths = append(paths, append(clonePath(path), -2)) // the list's length
			collect(tp.Elem(), append(clonePath(path), -1))
		default:
			paths = append(paths, path)
		}
	}
	collect(reflect.TypeFor[abi.Manifest](), nil)
	if len(paths) < 40 {
		t.Fatalf("found %d fields of abi.Manifest; the walk is broken", len(paths))
	}
	for _, path := range paths {
		m := fullManifest()
		v, name := reflect.ValueOf(m).Elem(), "Manifest"
		for _, i := range path {
			for v.Kind() == reflect.Pointer {
				v = v.Elem()
			}
			switch i {
			case -1:
				v, name = v.Index(0), name+"[0]"
			case -2:
				name += ".len"
			default:
				name += "." + v.Type().Field(i).Name
				v = v.Field(i)
			}
		}
		switch {
		case strings.HasSuffix(name, ".len"):
			v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
		case v.Kind() == reflect.Pointer:
			v.Set(reflect.Zero(v.Type())) // set → nil
		case v.Type() == reflect.TypeFor[json.RawMessage]():
			v.SetBytes([]byte(`{"changed":1}`))
		case v.Kind() == reflect.String:
			v.SetString(v.String() + "x")
		case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
			v.SetInt(v.Int() + 1)
		case v.Kind() == reflect.Bool:
			v.SetBool(!v.Bool())
		case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
			v.Set(reflect.Append(v, reflect.ValueOf("x")))
		default:
			t.Fatalf("%s: a field of kind %s the test does not know how to change", name, v.Kind())
		}
		if manifestSum(m) == base {
			t.Errorf("changing %s leaves the manifest's hash as it was", name)
		}
	}
}

// TestHashManifestSeparatesFields: moving bytes from one field to the
// next, or a raw value's absence to the literal null, changes the hash.
func TestHashManifestSeparatesFields(t *testing.T) {
	a, b := fullManifest(), fullManifest()
	a.Name, a.Version = "ab", "c"
	b.Name, b.Version = "a", "bc"
	if manifestSum(a) == manifestSum(b) {
		t.Error(`"ab","c" and "a","bc" hash alike`)
	}
	a, b = fullManifest(), fullManifest()
	a.Tools[0].OutputSchema, b.Tools[0].OutputSchema = nil, json.RawMessage("null")
	if manifestSum(a) == manifestSum(b) {
		t.Error("an absent outputSchema and a null one hash alike")
	}
}

func clonePath(p []int) []int { return append([]int(nil), p...) }
