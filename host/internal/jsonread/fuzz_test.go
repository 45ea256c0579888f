package jsonread

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/corral-mcp/corral/host/internal/jsontest"
	"github.com/google/go-cmp/cmp"
)

// probe is a struct for Unmarshal: known names of every kind.
type probe struct {
	A   string            `json:"a"`
	N   *int64            `json:"n,omitempty"`
	F   float64           `json:"f"`
	T   bool              `json:"t"`
	Sub *probe            `json:"sub"`
	L   []probe           `json:"l"`
	M   map[string]string `json:"m"`
	Raw json.RawMessage   `json:"raw"`
	Any any               `json:"any"`
}

var probeNames = []string{"a", "n", "f", "t", "sub", "l", "m", "raw", "any"}

// readAny reads any value with a Decoder, every object as a map (so a
// repeated name anywhere is refused), into what encoding/json gives an
// interface.
func readAny(d *Decoder) any {
	switch c := d.Peek(); {
	case c == '{':
		m := map[string]any{}
		d.Map("", func(key []byte) { m[string(key)] = readAny(d) })
		return m
	case c == '[':
		l := []any{}
		d.Array("", func() { l = append(l, readAny(d)) })
		return l
	case c == '"':
		return d.String("").String()
	case c == 't' || c == 'f':
		v, _ := d.Bool("")
		return v
	case c == 'n':
		d.Null()
		return nil
	default:
		n := d.Num("")
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil && n != nil {
			d.Refuse(&TypeError{Field: "number", Want: "float64"})
		}
		return f
	}
}

// FuzzUnmarshal holds the reader to encoding/json: on valid UTF-8 with
// no repeated and no case-folded member names both accept the same
// inputs and decode the same values (into an interface and into a
// struct); a repeated name is always refused, and so is a known name
// written in another case.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"a":"x","n":1,"f":1.5e3,"t":true,"sub":{"a":"y"},"l":[{"a":"z"}],"m":{"k":"v"},"raw":[1,{"x":null}],"any":{"q":[]}}`,
		`{"a":"x","A":"y"}`, `{"a":"x","a":"y"}`, `{"m":{"k":"1","k":"2"}}`, `{"\u0061":"esc"}`, `{"ſub":{}}`,
		`{"raw":{"d":1,"d":2}}`, `[1,2,3]`, `"\ud800"`, `"\ud83d\ude00"`, `-0.0e+1`, `01`, `{"a":"x"} x`, "\"\xff\"",
		`{"n":1.5}`, `{"n":99999999999999999999}`, `{"a":5}`, `null`, `{"sub":null,"l":null}`, "{\"a\":\"x\"}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want any
		errJ := json.Unmarshal(b, &want)
		d := NewDecoder(b)
		got := readAny(d)
		errR := d.End()
		clean := utf8.Valid(b) && (errJ != nil || !jsontest.Folded(b))
		if errJ != nil && errR == nil {
			t.Fatalf("reader accepts what encoding/json refuses (%v): %q", errJ, b)
		}
		if errR != nil && errJ == nil && clean {
			t.Fatalf("reader refuses clean input: %v: %q", errR, b)
		}
		if errR == nil && clean {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("values differ for %q (-encoding/json +reader):\n%s", b, diff)
			}
		}
		if errJ == nil && repeated(b) && errR == nil {
			t.Fatalf("reader accepts a repeated name: %q", b)
		}

		var p1, p2 probe
		errJ = json.Unmarshal(b, &p1)
		errU := Unmarshal(b, &p2)
		clean = clean && (errJ != nil || !jsontest.Folded(b, probeNames...))
		if clean && (errJ == nil) != (errU == nil) {
			t.Fatalf("Unmarshal: encoding/json %v, reader %v, for %q", errJ, errU, b)
		}
		if clean && errU == nil {
			if diff := cmp.Diff(p1, p2); diff != "" {
				t.Fatalf("Unmarshal values differ for %q:\n%s", b, diff)
			}
		}
		// A known name repeated, or written in another case, at the top
		// of what encoding/json accepts as a probe: always refused.
		if errJ == nil && utf8.Valid(b) {
			if t0 := bytes.TrimLeft(b, " \t\r\n"); len(t0) > 0 && t0[0] == '{' {
				at := len(b) - len(t0) + 1
				empty := bytes.TrimLeft(b[at:], " \t\r\n")[0] == '}'
				for _, inject := range []string{`"a":"1","a":"2"`, `"A":"1"`, `"Sub":null`} {
					if !empty {
						inject += ","
					}
					mut := append(append(append([]byte{}, b[:at]...), inject...), b[at:]...)
					var me *MemberError
					if err := Unmarshal(mut, &p2); !errors.As(err, &me) {
						t.Fatalf("Unmarshal(%q) = %v, want a MemberError", mut, err)
					}
				}
			}
		}
	})
}

// repeated reports whether some object in b (valid JSON) repeats a name
// exactly.
func repeated(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		obj   bool
		names map[string]bool
		key   bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		top := len(stack) - 1
		if top >= 0 && stack[top].obj && stack[top].key {
			if s, ok := tok.(string); ok {
				if stack[top].names[s] {
					return true
				}
				stack[top].names[s] = true
				stack[top].key = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{obj: true, key: true, names: map[string]bool{}})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
			top--
		}
		if top >= 0 && stack[top].obj {
			stack[top].key = true
		}
	}
}
