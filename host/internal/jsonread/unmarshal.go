package jsonread

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// Unmarshal decodes b into v (a non-nil pointer) as encoding/json does,
// after a strict pass (Decoder) that follows v's type: in every struct
// the member names are its fields' json names, and a repeated or
// case-folded one is refused, as is a repeated name in a map, invalid
// UTF-8 or data after the value. json.RawMessage, interfaces and other
// json.Unmarshaler values are opaque (well-formed only). A wrong type is
// left to encoding/json, which words it. On input the strict pass
// accepts, encoding/json's case-insensitive, last-one-wins matching has
// nothing to choose between, so v holds exactly what was checked.
//
// Unmarshal is for the cold paths (error objects, http_fetch requests);
// hot paths read with a Decoder directly.
func Unmarshal(b []byte, v any) error {
	d := NewDecoder(b)
	d.walk(shapeOf(reflect.TypeOf(v)), "")
	if err := d.End(); err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// shape is what the strict pass knows of a Go type.
type shape struct {
	kind   shapeKind
	names  *Names   // kindStruct: the fields' json names
	fields []*shape // kindStruct: per name
	elem   *shape   // kindMap, kindSlice, kindPtr
}

type shapeKind uint8

const (
	kindOpaque shapeKind = iota // anything, well-formed
	kindStruct
	kindMap
	kindSlice
)

var (
	shapes        sync.Map // reflect.Type → *shape
	unmarshalerT  = reflect.TypeFor[json.Unmarshaler]()
	rawMessageT   = reflect.TypeFor[json.RawMessage]()
	opaqueShape   = &shape{kind: kindOpaque}
	shapeBuilding sync.Mutex
)

func shapeOf(t reflect.Type) *shape {
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	shapeBuilding.Lock()
	defer shapeBuilding.Unlock()
	return buildShape(t, map[reflect.Type]*shape{})
}

// buildShape builds t's shape; inProgress ties recursive types.
func buildShape(t reflect.Type, inProgress map[reflect.Type]*shape) *shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	if s, ok := inProgress[t]; ok {
		return s
	}
	if t == rawMessageT || t.Implements(unmarshalerT) || reflect.PointerTo(t).Implements(unmarshalerT) {
		return opaqueShape
	}
	s := &shape{}
	inProgress[t] = s
	switch t.Kind() {
	case reflect.Struct:
		s.kind = kindStruct
		var names []string
		addFields(t, &names, &s.fields, inProgress)
		s.names = NewNames(names...)
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			s.kind = kindMap
			s.elem = buildShape(t.Elem(), inProgress)
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() != reflect.Uint8 { // []byte is a base64 string
			s.kind = kindSlice
			s.elem = buildShape(t.Elem(), inProgress)
		}
	}
	shapes.Store(t, s)
	return s
}

// addFields appends the json names of t's fields (embedded structs
// without a tag promote theirs, as in encoding/json).
func addFields(t reflect.Type, names *[]string, fields *[]*shape, inProgress map[reflect.Type]*shape) {
	for j := range t.NumField() {
		f := t.Field(j)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(ft, names, fields, inProgress)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		*names = append(*names, name)
		*fields = append(*fields, buildShape(ft, inProgress))
	}
}

// walk reads one value of shape s strictly; path names it in errors.
func (d *Decoder) walk(s *shape, path string) {
	switch c := d.Peek(); {
	case c == 'n' || s.kind == kindOpaque:
		d.skip()
	case s.kind == kindStruct && c == '{':
		d.Object(path, s.names, func(i int, key []byte) {
			if i < 0 {
				d.skip()
				return
			}
			d.walk(s.fields[i], join(path, s.names.list[i]))
		})
	case s.kind == kindMap && c == '{':
		d.Map(path, func(key []byte) { d.walk(s.elem, join(path, string(key))) })
	case s.kind == kindSlice && c == '[':
		d.Array(path, func() { d.walk(s.elem, path) })
	default:
		d.skip() // a wrong type: encoding/json words it
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
