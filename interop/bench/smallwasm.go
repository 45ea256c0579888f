package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The small plugins of the density rows: providers written straight in the
// WebAssembly binary format (no toolchain), each about 900 bytes, each its
// own plugin with its own scheme, one static resource NAME://doc, one
// prompt NAME-greet and one tool NAME-echo. They stand for the guests of
// small-runtime languages (WAT, C): no heap, no runtime, canned answers
// (every read answers NAME://doc, the only resource the plugin lists).

// smallName is the name (and scheme) of small plugin i.
func smallName(i int) string { return fmt.Sprintf("s%05d", i) }

// smallDocText is the text of small plugin name's resource.
func smallDocText(name string) string { return "the document of " + name }

// smallPromptText and smallToolText are its prompt's message and its
// tool's answer.
func smallPromptText(name string) string { return "Hello from " + name }
func smallToolText(name string) string   { return name + " was called" }

// smallPlugin returns the module of small plugin name: the ABI's three
// exports (corral_abi_v1 answering minor 3, corral_buffer handing out one
// 64 KiB buffer at 64 KiB, corral_call answering describe, read_resource,
// get_prompt and call_tool from data segments, and not_found to anything
// else) over two pages of memory, importing only set_result.
func smallPlugin(name string) []byte {
	manifest := fmt.Sprintf(`{"name":%q,"version":"1.0.0","abi":1,"title":"Small plugin %s","schemes":[%q],`+
		`"resources":[{"uri":"%s://doc","name":"doc","mimeType":"text/plain"}],`+
		`"prompts":[{"name":"%s-greet","description":"A canned greeting"}],`+
		`"tools":[{"name":"%s-echo","description":"A canned answer","inputSchema":{"type":"object"}}]}`,
		name, name, name, name, name, name)
	answers := []struct {
		op, status int32
		body       string
	}{
		{1, 0, manifest},
		{3, 0, fmt.Sprintf(`{"contents":[{"uri":"%s://doc","mimeType":"text/plain","text":%q}]}`, name, smallDocText(name))},
		{4, 0, fmt.Sprintf(`{"messages":[{"role":"user","content":{"type":"text","text":%q}}]}`, smallPromptText(name))},
		{5, 0, fmt.Sprintf(`{"content":[{"type":"text","text":%q}]}`, smallToolText(name))},
	}
	notFound := `{"code":"not_found","message":"no such operation"}`

	const (
		dataAt   = 1024
		bufferAt = 65536 // the request buffer: the second page
		pages    = 2
	)
	// corral_call: for each answer, `if op == k { set_result(ptr, len); return status }`,
	// then the not_found error with status 1.
	var call, data []byte
	at := int32(dataAt)
	segment := func(body string) int32 {
		ptr := at
		data = append(data, 0x00, 0x41) // active segment of memory 0, offset i32.const
		data = sleb(data, ptr)
		data = append(data, 0x0b)
		data = uleb(data, uint32(len(body)))
		data = append(data, body...)
		at += int32(len(body))
		return ptr
	}
	for _, a := range answers {
		ptr := segment(a.body)
		call = append(call, 0x20, 0x00, 0x41) // local.get $op, i32.const
		call = sleb(call, a.op)
		call = append(call, 0x46, 0x04, 0x40, 0x41) // i32.eq, if, i32.const
		call = sleb(call, ptr)
		call = append(call, 0x41)
		call = sleb(call, int32(len(a.body)))
		call = append(call, 0x10, 0x00, 0x41) // call $set_result, i32.const
		call = sleb(call, a.status)
		call = append(call, 0x0f, 0x0b) // return, end
	}
	ptr := segment(notFound)
	call = append(call, 0x41)
	call = sleb(call, ptr)
	call = append(call, 0x41)
	call = sleb(call, int32(len(notFound)))
	call = append(call, 0x10, 0x00, 0x41, 0x01, 0x0b) // call $set_result, i32.const 1, end
	if at > bufferAt {
		panic("smallPlugin: data overlaps the request buffer")
	}

	// corral_buffer: `size > 65536 ? 0 : 65536`.
	buffer := []byte{0x20, 0x00, 0x41}
	buffer = sleb(buffer, bufferAt)
	buffer = append(buffer, 0x4b, 0x04, 0x7f, 0x41, 0x00, 0x05, 0x41) // i32.gt_u, if (result i32), i32.const 0, else, i32.const
	buffer = sleb(buffer, bufferAt)
	buffer = append(buffer, 0x0b, 0x0b)

	const (
		i32    = 0x7f
		tFunc  = 0x60
		kFunc  = 0x00
		kMem   = 0x02
		noLocs = 0x00
	)
	types := vec([]byte{tFunc, 2, i32, i32, 0}, // 0 set_result (i32, i32) -> ()
		[]byte{tFunc, 0, 1, i32},           // 1 () -> i32
		[]byte{tFunc, 1, i32, 1, i32},      // 2 (i32) -> i32
		[]byte{tFunc, 2, i32, i32, 1, i32}) // 3 (i32, i32) -> i32
	imports := vec(append(append(str("corral_v1"), str("set_result")...), kFunc, 0))
	funcs := vec([]byte{1}, []byte{2}, []byte{3})
	memory := vec([]byte{0x00, pages})
	exports := vec(append(str("memory"), kMem, 0),
		append(str("corral_abi_v1"), kFunc, 1),
		append(str("corral_buffer"), kFunc, 2),
		append(str("corral_call"), kFunc, 3))
	body := func(code []byte) []byte { return sized(append([]byte{noLocs}, code...)) }
	code := vec(body([]byte{0x41, 0x03, 0x0b}), body(buffer), body(call))
	segments := uleb(nil, uint32(len(answers)+1))
	segments = append(segments, data...)

	out := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}
	for _, s := range []struct {
		id      byte
		payload []byte
	}{{1, types}, {2, imports}, {3, funcs}, {5, memory}, {7, exports}, {10, code}, {11, segments}} {
		out = append(out, s.id)
		out = append(out, sized(s.payload)...)
	}
	return out
}

// writeSmallPlugins writes small plugins s00000 … to a fresh dir, each file
// dated an hour ago (settled for the registry's debounce), and returns
// their names.
func writeSmallPlugins(dir string, n int) ([]string, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("small plugins: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("small plugins: %w", err)
	}
	old := time.Now().Add(-time.Hour)
	names := make([]string, n)
	for i := range n {
		names[i] = smallName(i)
		path := filepath.Join(dir, names[i]+".wasm")
		if err := os.WriteFile(path, smallPlugin(names[i]), 0o644); err != nil {
			return nil, fmt.Errorf("small plugins: %w", err)
		}
		if err := os.Chtimes(path, old, old); err != nil {
			return nil, fmt.Errorf("small plugins: %w", err)
		}
	}
	return names, nil
}

// uleb appends v in unsigned LEB128, sleb v in signed LEB128.
func uleb(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func sleb(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// sized prefixes b with its length; vec is a vector of items; str a name.
func sized(b []byte) []byte { return append(uleb(nil, uint32(len(b))), b...) }

func vec(items ...[]byte) []byte {
	out := uleb(nil, uint32(len(items)))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

func str(s string) []byte { return sized([]byte(s)) }
