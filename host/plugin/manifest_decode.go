package plugin

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/internal/jsonread"
)

// decodeManifest reads a describe response into an abi.Manifest in one
// strict pass: it accepts exactly what jsonread.Unmarshal accepts into the
// same type and fills the same values (TestDecodeManifestAgrees,
// FuzzDecodeManifest), at a fraction of its cost. Unmarshal walks the
// value, then encoding/json reads it again through reflection; a warm
// start of Go guests of 1,000 resources each spent half of its CPU there,
// reading manifests back from the metadata cache.
func decodeManifest(b []byte) (*abi.Manifest, error) {
	d := mdec{jsonread.NewDecoder(b)}
	m := new(abi.Manifest)
	d.Object("", manifestNames, func(i int, _ []byte) {
		switch i {
		case 0:
			d.str(&m.Name, "name")
		case 1:
			d.str(&m.Version, "version")
		case 2:
			d.integer(&m.ABI, "abi")
		case 3:
			d.str(&m.Title, "title")
		case 4:
			d.str(&m.Description, "description")
		case 5:
			m.Schemes = d.strings("schemes")
		case 6:
			m.Resources = slice(d, "resources", d.resource)
		case 7:
			m.Templates = slice(d, "templates", d.template)
		case 8:
			m.Prompts = slice(d, "prompts", d.prompt)
		case 9:
			m.Tools = slice(d, "tools", d.tool)
		case 10:
			m.Capabilities = d.strings("capabilities")
		case 11:
			m.RequiredCapabilities = d.strings("requiredCapabilities")
		case 12:
			d.boolean(&m.ListsResources, "listsResources")
		default:
			d.Skip()
		}
	})
	if err := d.End(); err != nil {
		return nil, err
	}
	return m, nil
}

// The json names of abi's manifest types, in the order decodeManifest's
// switches use.
var (
	manifestNames = jsonread.NewNames("name", "version", "abi", "title", "description", "schemes", "resources",
		"templates", "prompts", "tools", "capabilities", "requiredCapabilities", "listsResources")
	resourceNames = jsonread.NewNames("uri", "name", "title", "description", "mimeType", "size", "annotations", "icons")
	templateNames = jsonread.NewNames("uriTemplate", "name", "title", "description", "mimeType", "annotations", "icons", "complete")
	promptNames   = jsonread.NewNames("name", "title", "description", "arguments", "icons", "complete")
	argumentNames = jsonread.NewNames("name", "title", "description", "required")
	toolNames     = jsonread.NewNames("name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons",
		"execution", "inputFirst", "taskDeadlineMs")
	executionNames = jsonread.NewNames("taskSupport")
)

// mdec reads the manifest's members with encoding/json's rules for the
// field types abi uses: null leaves a field as it is (nil for slices,
// pointers and raw values, which encoding/json sets to the literal null).
type mdec struct{ *jsonread.Decoder }

func (d mdec) resource(r *abi.Resource) {
	d.Object("resources", resourceNames, func(i int, _ []byte) {
		switch i {
		case 0:
			d.str(&r.URI, "resources.uri")
		case 1:
			d.str(&r.Name, "resources.name")
		case 2:
			d.str(&r.Title, "resources.title")
		case 3:
			d.str(&r.Description, "resources.description")
		case 4:
			d.str(&r.MimeType, "resources.mimeType")
		case 5:
			if d.Null() {
				r.Size = nil
				return
			}
			n := new(int64)
			if d.integer(n, "resources.size") {
				r.Size = n
			}
		case 6:
			r.Annotations = d.raw()
		case 7:
			r.Icons = d.raw()
		default:
			d.Skip()
		}
	})
}

func (d mdec) template(t *abi.Template) {
	d.Object("templates", templateNames, func(i int, _ []byte) {
		switch i {
		case 0:
			d.str(&t.URITemplate, "templates.uriTemplate")
		case 1:
			d.str(&t.Name, "templates.name")
		case 2:
			d.str(&t.Title, "templates.title")
		case 3:
			d.str(&t.Description, "templates.description")
		case 4:
			d.str(&t.MimeType, "templates.mimeType")
		case 5:
			t.Annotations = d.raw()
		case 6:
			t.Icons = d.raw()
		case 7:
			t.Complete = d.strings("templates.complete")
		default:
			d.Skip()
		}
	})
}

func (d mdec) prompt(p *abi.Prompt) {
	d.Object("prompts", promptNames, func(i int, _ []byte) {
		switch i {
		case 0:
			d.str(&p.Name, "prompts.name")
		case 1:
			d.str(&p.Title, "prompts.title")
		case 2:
			d.str(&p.Description, "prompts.description")
		case 3:
			p.Arguments = slice(d, "prompts.arguments", d.argument)
		case 4:
			p.Icons = d.raw()
		case 5:
			p.Complete = d.strings("prompts.complete")
		default:
			d.Skip()
		}
	})
}

func (d mdec) argument(a *abi.PromptArgument) {
	d.Object("prompts.arguments", argumentNames, func(i int, _ []byte) {
		switch i {
		case 0:
			d.str(&a.Name, "prompts.arguments.name")
		case 1:
			d.str(&a.Title, "prompts.arguments.title")
		case 2:
			d.str(&a.Description, "prompts.arguments.description")
		case 3:
			d.boolean(&a.Required, "prompts.arguments.required")
		default:
			d.Skip()
		}
	})
}

func (d mdec) tool(t *abi.Tool) {
	d.Object("tools", toolNames, func(i int, _ []byte) {
		switch i {
		case 0:
			d.str(&t.Name, "tools.name")
		case 1:
			d.str(&t.Title, "tools.title")
		case 2:
			d.str(&t.Description, "tools.description")
		case 3:
			t.InputSchema = d.raw()
		case 4:
			t.OutputSchema = d.raw()
		case 5:
			t.Annotations = d.raw()
		case 6:
			t.Icons = d.raw()
		case 7:
			if d.Null() {
				t.Execution = nil
				return
			}
			e := new(abi.ToolExecution)
			d.Object("tools.execution", executionNames, func(i int, _ []byte) {
				if i == 0 {
					d.str(&e.TaskSupport, "tools.execution.taskSupport")
					return
				}
				d.Skip()
			})
			t.Execution = e
		case 8:
			d.boolean(&t.InputFirst, "tools.inputFirst")
		case 9:
			d.integer(&t.TaskDeadlineMs, "tools.taskDeadlineMs")
		default:
			d.Skip()
		}
	})
}

// slice reads an array of T: null is nil, [] is empty, and each element
// (null leaves it zero) is read by elem.
func slice[T any](d mdec, path string, elem func(*T)) []T {
	if d.Null() {
		return nil
	}
	s := []T{}
	d.Array(path, func() {
		var v T
		elem(&v)
		s = append(s, v)
	})
	if d.Failed() {
		return nil
	}
	return s
}

// strings reads an array of strings (null: nil; a null element: "").
func (d mdec) strings(path string) []string {
	if d.Null() {
		return nil
	}
	s := []string{}
	d.Array(path, func() {
		var v string
		d.str(&v, path)
		s = append(s, v)
	})
	if d.Failed() {
		return nil
	}
	return s
}

// str reads a string field; null leaves it as it is.
func (d mdec) str(dst *string, path string) {
	if s := d.String(path); s.Present() {
		*dst = s.String()
	}
}

// boolean reads a bool field; null leaves it as it is.
func (d mdec) boolean(dst *bool, path string) {
	if v, ok := d.Bool(path); ok {
		*dst = v
	}
}

// integer reads an integer field (null leaves it as it is) and reports
// whether it read one: a number that is not an integer in range of T is
// refused, as encoding/json refuses it.
func (d mdec) integer(dst any, path string) bool {
	lit := d.Num(path)
	if lit == nil {
		return false
	}
	var err error
	switch p := dst.(type) {
	case *int:
		*p, err = strconv.Atoi(string(lit))
	case *int64:
		*p, err = strconv.ParseInt(string(lit), 10, 64)
	}
	if err != nil {
		d.Refuse(fmt.Errorf("%s: %s is not an integer of 64 bits", path, lit))
		return false
	}
	return true
}

// raw reads any value as a copy of its bytes (null too, as encoding/json
// gives a json.RawMessage the literal null).
func (d mdec) raw() json.RawMessage {
	v := d.Skip()
	if v == nil {
		return nil
	}
	return append(json.RawMessage(nil), v...)
}
