package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/plugin/internal/interrupt"
)

// The build settings that make a reactor, named in load errors so an
// author sees the fix for their toolchain (docs/plugins.md has the rest).
const (
	fixReactor = "rebuild it as a reactor: Go -buildmode=c-shared, C -mexec-model=reactor, Rust a cdylib crate"
	fixTarget  = "build it for wasm32-wasi: Go GOOS=wasip1 GOARCH=wasm -buildmode=c-shared, C clang --target=wasm32-wasi -mexec-model=reactor, Rust --target wasm32-wasi"
)

// fileKind explains a file that does not start as a WebAssembly 1 core
// module: what it is, and what to build instead. It returns nil for a file
// with the core module header.
func fileKind(wasm []byte) error {
	head := wasm[:min(len(wasm), 8)]
	switch {
	case len(wasm) == 0:
		return errors.New("the file is empty: " + fixTarget)
	case bytes.HasPrefix(wasm, []byte("\x00asm")) && len(wasm) >= 8:
		version := uint32(wasm[4]) | uint32(wasm[5])<<8
		layer := uint32(wasm[6]) | uint32(wasm[7])<<8
		switch {
		case version == 1 && layer == 0:
			return nil
		case layer == 1:
			return errors.New("the file is a WebAssembly component, not a core module: corral loads WASI preview 1 core modules; " +
				"build for wasm32-wasi (not wasm32-wasip2) and leave out the component step (wasm-tools component new, jco, componentize-*)")
		default:
			return fmt.Errorf("the file is a WebAssembly binary of version %d, and corral loads version 1 core modules: %s", version, fixTarget)
		}
	case bytes.HasPrefix(wasm, []byte("\x00asm")):
		return fmt.Errorf("the file is truncated: %d bytes, shorter than a WebAssembly header; rebuild it or copy it again in full", len(wasm))
	case bytes.HasPrefix(wasm, []byte("\x7fELF")):
		return errors.New("the file is a native ELF executable, not WebAssembly: " + fixTarget)
	case bytes.HasPrefix(wasm, []byte("MZ")):
		return errors.New("the file is a native Windows executable, not WebAssembly: " + fixTarget)
	case isMachO(head):
		return errors.New("the file is a native Mach-O executable, not WebAssembly: " + fixTarget)
	case isWAT(wasm):
		return errors.New("the file is WebAssembly text (.wat), not a binary module: convert it with wat2wasm")
	}
	return fmt.Errorf("the file is not WebAssembly (it starts with % x, not 00 61 73 6d): %s", head, fixTarget)
}

func isMachO(head []byte) bool {
	for _, magic := range []string{"\xfe\xed\xfa\xce", "\xfe\xed\xfa\xcf", "\xce\xfa\xed\xfe", "\xcf\xfa\xed\xfe", "\xca\xfe\xba\xbe"} {
		if bytes.HasPrefix(head, []byte(magic)) {
			return true
		}
	}
	return false
}

// isWAT reports whether b looks like the text format: a module form after
// whitespace and comments.
func isWAT(b []byte) bool {
	s := string(b[:min(len(b), 4096)])
	for {
		s = strings.TrimLeft(s, " \t\r\n")
		if !strings.HasPrefix(s, ";;") {
			break
		}
		nl := strings.IndexByte(s, '\n')
		if nl < 0 {
			return false
		}
		s = s[nl+1:]
	}
	return strings.HasPrefix(s, "(module")
}

// decodeError explains why a file with the module header does not decode,
// without the decoder's own names.
func decodeError(wasm []byte, err error) error {
	if errors.Is(err, interrupt.ErrUnexpectedEnd) {
		return fmt.Errorf("the file is truncated or corrupt: it ends, at %d bytes, inside what it declares; rebuild it or copy it again in full", len(wasm))
	}
	cause := err.Error()
	if inner := errors.Unwrap(err); inner != nil {
		cause = inner.Error()
	}
	return fmt.Errorf("the file is not a valid WebAssembly 2.0 module (%s): %s", cause, fixTarget)
}

// shapeHint explains the exports and imports of a decoded module that show
// it was built the wrong way: a WASI command instead of a reactor, a module
// with none of the ABI's exports, or one linked for another host. It
// returns nil when none of these apply; checkABI then names the details.
func shapeHint(exports map[string]Signature, imports []Import) error {
	if _, ok := exports["_start"]; ok {
		// The host never runs _start: a Go command traps in every export
		// (its runtime is not initialised), a C command runs its
		// constructors and destructors around every call.
		return errors.New("the module is a WASI command (it exports _start), and corral loads reactors: " + fixReactor)
	}
	var ours int
	for _, name := range []string{abi.ExportMarker, abi.ExportBuffer, abi.ExportCall} {
		if _, ok := exports[name]; ok {
			ours++
		}
	}
	var foreign []string
	for _, imp := range imports {
		if imp.Module != wasiModule && !importModuleRE.MatchString(imp.Module) {
			foreign = append(foreign, imp.Module+"."+imp.Name)
		}
	}
	switch {
	case len(foreign) > 0 && hasModule(imports, "__wbindgen_placeholder__"):
		return fmt.Errorf("the module was built with wasm-bindgen for a JavaScript host (it imports %s): build a plain cdylib for wasm32-wasi with the corral SDK instead", foreign[0])
	case hasImport(imports, "env", "abort") || hasImport(imports, "env", "trace") || hasImport(imports, "env", "seed"):
		return fmt.Errorf("the module imports %s: AssemblyScript imports env.abort, env.trace and env.seed unless told otherwise; "+
			"build it with asc --use abort= (or --use abort=FILE/yourAbort), and use WASI's random_get for seeds", foreignOf(imports, "env"))
	case len(foreign) > 0 && hasModule(imports, "env"):
		return fmt.Errorf("the module imports %s from module \"env\": a toolchain leaves unresolved functions there when it links for no host (wasm32-unknown-unknown, --allow-undefined); "+
			"define the function, or import it from corral_v1 as ABI.md §8 names it, and %s", foreign[0], fixTarget)
	case ours == 0:
		return errors.New("the module exports none of corral_abi_v1, corral_buffer and corral_call: it is not a corral plugin; build it with a corral SDK (docs/plugins.md)")
	}
	return nil
}

func hasImport(imports []Import, module, name string) bool {
	for _, imp := range imports {
		if imp.Module == module && imp.Name == name {
			return true
		}
	}
	return false
}

// foreignOf names the first import from module.
func foreignOf(imports []Import, module string) string {
	for _, imp := range imports {
		if imp.Module == module {
			return imp.Module + "." + imp.Name
		}
	}
	return ""
}

func hasModule(imports []Import, module string) bool {
	for _, imp := range imports {
		if imp.Module == module {
			return true
		}
	}
	return false
}

// describeRefused explains a describe that answered something other than
// its manifest: the guest's own error when it sent one.
func describeRefused(status abi.Status, body []byte) error {
	const why = "describe runs once at load, with no capabilities, and must answer the manifest"
	var e abi.Error
	if status == abi.StatusError && json.Unmarshal(body, &e) == nil && e.Code != "" {
		return fmt.Errorf("answered an error instead of its manifest, code %s: %s (%s)", e.Code, e.Message, why)
	}
	return fmt.Errorf("answered status %d instead of its manifest (%s)", status, why)
}

// firstLine keeps the first line of a load failure's message (an engine
// appends a wasm stack trace to a trap), so that a load error is one line
// in the log and in `corral plugin check`.
func firstLine(err error) error {
	msg := err.Error()
	i := strings.IndexByte(msg, '\n')
	if i < 0 {
		return err
	}
	return &trimmed{msg: strings.TrimRight(msg[:i], " :"), err: err}
}

type trimmed struct {
	msg string
	err error
}

func (t *trimmed) Error() string { return t.msg }
func (t *trimmed) Unwrap() error { return t.err }
