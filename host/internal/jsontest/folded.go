// Package jsontest holds the oracle the fuzzers of corral's strict JSON
// readers share: what encoding/json accepts that they must refuse.
package jsontest

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Folded reports whether some object in b (valid JSON) has two member
// names equal under case folding (repeated ones included), or one that
// matches a known name only by case: where encoding/json picks one of the
// two and a strict reader refuses the input.
func Folded(b []byte, known ...string) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		obj   bool
		names []string
		key   bool // the next token in an object is a name
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
				for _, n := range known {
					if s != n && strings.EqualFold(n, s) {
						return true
					}
				}
				for _, n := range stack[top].names {
					if strings.EqualFold(n, s) {
						return true
					}
				}
				stack[top].names = append(stack[top].names, s)
				stack[top].key = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{obj: true, key: true})
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
