package plugin

import (
	"errors"
	"fmt"

	"github.com/corral-mcp/corral/host/plugin/internal/interrupt"
)

// CompileLimits bound the shape of a plugin file. Compile checks them on
// the decoded module before the engine sees it: an engine's compile time
// grows faster than linearly with some of these (wazero's with the nesting
// depth of one function), and a compile cannot be interrupted once it
// started. A zero field takes its DefaultCompileLimits value.
type CompileLimits struct {
	MaxFileBytes     int    // the whole file
	MaxFunctions     int    // function bodies
	MaxFunctionBytes int    // one function body
	MaxNesting       int    // block, loop and if nested in one body
	MaxLocals        uint64 // locals one function declares, parameters not counted
}

// DefaultCompileLimits are sized from the bundled Go guests (about 4.4 MB,
// 2,600 functions, the largest body 50,636 bytes, 549 blocks deep, 20
// locals), with room for other toolchains. wazero compiles one function
// nested 1,024 deep in about 25 ms and 16,384 deep in about 5 s.
var DefaultCompileLimits = CompileLimits{
	MaxFileBytes:     32 << 20,
	MaxFunctions:     50_000,
	MaxFunctionBytes: 1 << 20,
	MaxNesting:       1024,
	MaxLocals:        50_000,
}

func (l CompileLimits) withDefaults() CompileLimits {
	d := DefaultCompileLimits
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxFunctions <= 0 {
		l.MaxFunctions = d.MaxFunctions
	}
	if l.MaxFunctionBytes <= 0 {
		l.MaxFunctionBytes = d.MaxFunctionBytes
	}
	if l.MaxNesting <= 0 {
		l.MaxNesting = d.MaxNesting
	}
	if l.MaxLocals == 0 {
		l.MaxLocals = d.MaxLocals
	}
	return l
}

// precheck decodes wasm and refuses it, without compiling, when it is not
// a WebAssembly core module (saying what it is instead), exceeds a limit or
// does not have the ABI's shape (the required exports and their
// signatures, only known imports). The decoder is the
// interrupt rewrite's, which refuses anything beyond WebAssembly 2.0.
func precheck(wasm []byte, l CompileLimits, hostFuncs []HostFunc) error {
	if len(wasm) > l.MaxFileBytes {
		return fmt.Errorf("file of %d bytes exceeds plugins.compile.maxFileBytes (%d)", len(wasm), l.MaxFileBytes)
	}
	if err := fileKind(wasm); err != nil {
		return err
	}
	sh, err := interrupt.Measure(wasm, l.MaxNesting)
	if errors.Is(err, interrupt.ErrTooDeep) {
		return fmt.Errorf("blocks nested more than %d deep exceed plugins.compile.maxNesting (%d)", l.MaxNesting, l.MaxNesting)
	}
	if err != nil {
		return decodeError(wasm, err)
	}
	switch {
	case sh.Functions > l.MaxFunctions:
		return fmt.Errorf("%d functions exceed plugins.compile.maxFunctions (%d)", sh.Functions, l.MaxFunctions)
	case sh.MaxBodyBytes > l.MaxFunctionBytes:
		return fmt.Errorf("a function body of %d bytes exceeds plugins.compile.maxFunctionBytes (%d)", sh.MaxBodyBytes, l.MaxFunctionBytes)
	case sh.MaxLocals > l.MaxLocals:
		return fmt.Errorf("a function with %d locals exceeds plugins.compile.maxLocals (%d)", sh.MaxLocals, l.MaxLocals)
	}
	return checkABI(shapeSurface{sh}, hostFuncs)
}

// shapeSurface is a decoded module's exports and imports as checkABI
// reads them.
type shapeSurface struct{ sh interrupt.Shape }

func (s shapeSurface) Exports() map[string]Signature {
	out := make(map[string]Signature)
	for _, e := range s.sh.Exports {
		if e.Kind == interrupt.KindFunc {
			out[e.Name] = signature(e)
		}
	}
	return out
}

func (s shapeSurface) Memories() []string {
	var out []string
	for _, e := range s.sh.Exports {
		if e.Kind == interrupt.KindMemory {
			out = append(out, e.Name)
		}
	}
	return out
}

func (s shapeSurface) Imports() []Import {
	var out []Import
	for _, i := range s.sh.Imports {
		if i.Kind == interrupt.KindFunc {
			out = append(out, Import{Module: i.Module, Name: i.Name, Sig: signature(i)})
		}
	}
	return out
}

func signature(e interrupt.Extern) Signature {
	return Signature{Params: valueTypes(e.Params), Results: valueTypes(e.Results)}
}

func valueTypes(b []byte) []ValueType {
	out := make([]ValueType, len(b))
	for i, t := range b {
		out[i] = ValueType(t)
	}
	return out
}
