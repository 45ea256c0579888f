package plugin

import (
	"context"
	"io"
)

// ValueType is a WebAssembly value type in a function signature.
type ValueType byte

// Value types. Only these appear in the corral ABI.
const (
	I32 ValueType = 0x7f
	I64 ValueType = 0x7e
	F32 ValueType = 0x7d
	F64 ValueType = 0x7c
)

// String returns the type's WebAssembly text name.
func (t ValueType) String() string {
	switch t {
	case I32:
		return "i32"
	case I64:
		return "i64"
	case F32:
		return "f32"
	case F64:
		return "f64"
	}
	return "unknown"
}

// Signature is a function type.
type Signature struct {
	Params  []ValueType
	Results []ValueType
}

// String formats the signature as "(i32, i32) -> i32".
func (s Signature) String() string {
	out := "("
	for i, p := range s.Params {
		if i > 0 {
			out += ", "
		}
		out += p.String()
	}
	out += ") -> ("
	for i, r := range s.Results {
		if i > 0 {
			out += ", "
		}
		out += r.String()
	}
	return out + ")"
}

// Equal reports whether two signatures are identical.
func (s Signature) Equal(o Signature) bool {
	if len(s.Params) != len(o.Params) || len(s.Results) != len(o.Results) {
		return false
	}
	for i := range s.Params {
		if s.Params[i] != o.Params[i] {
			return false
		}
	}
	for i := range s.Results {
		if s.Results[i] != o.Results[i] {
			return false
		}
	}
	return true
}

// Memory is an instance's linear memory as a host function sees it. Read
// returns a view that is only valid until the guest runs again; copy it.
type Memory interface {
	Read(offset, n uint32) ([]byte, bool)
	Write(offset uint32, b []byte) bool
	Size() uint32
}

// HostFunc is a function the host provides to guests. Fn receives the
// context of the guest call that invoked it, the caller's memory and a
// stack holding the parameters on entry and the results on return. A
// panic in Fn traps the guest.
type HostFunc struct {
	Name string
	Sig  Signature
	Fn   func(ctx context.Context, mem Memory, stack []uint64)
}

// Import is one function a module imports.
type Import struct {
	Module, Name string
	Sig          Signature
}

// EngineConfig configures an Engine. It is fixed for the engine's life.
type EngineConfig struct {
	// MemoryLimitPages caps every instance's linear memory (64 KiB pages).
	MemoryLimitPages uint32
	// Fuel, when not zero, meters guest instructions: every call (and every
	// instantiation) may spend at most Fuel units. Engines without metering
	// refuse it.
	Fuel uint64
	// HostModule and HostFuncs are linked into every instance.
	HostModule string
	HostFuncs  []HostFunc
}

// Engine compiles and instantiates WebAssembly modules. Implementations
// must stop a running call when its context is done and must make host
// functions see the context passed to Call or Instantiate.
type Engine interface {
	// Compile validates and compiles the module whose sha256 (hex) is
	// digest. read returns its bytes, or the error that must fail the
	// compile (the file changed): Compile calls it once, and may do so
	// beside its own work when its caches answer without the bytes. An
	// engine may key what it caches by digest, and caches nothing when it
	// is empty.
	Compile(ctx context.Context, digest string, read func() ([]byte, error)) (CompiledModule, error)
	Close(ctx context.Context) error
}

// CompiledModule is a validated, compiled module that can be instantiated
// many times.
type CompiledModule interface {
	// Exports returns the exported functions and their signatures.
	Exports() map[string]Signature
	// Memories returns the names of the exported memories.
	Memories() []string
	// Imports returns the imported functions.
	Imports() []Import
	// Instantiate creates an instance, running StartFunctions in order
	// (those the module does not export are skipped).
	Instantiate(ctx context.Context, cfg InstanceConfig) (Instance, error)
	Close(ctx context.Context) error
}

// InstanceConfig configures one instance.
type InstanceConfig struct {
	StartFunctions []string
	// Stderr receives what the guest writes to file descriptor 2; stdout
	// is discarded.
	Stderr io.Writer
}

// Instance is one instantiated module. It runs one call at a time.
type Instance interface {
	// Function returns an exported function, or nil.
	Function(name string) Function
	Memory() Memory
	Close(ctx context.Context) error
}

// Function is an exported guest function. Call takes the parameters in
// stack and leaves the results there; stack must be large enough for
// both.
type Function interface {
	Call(ctx context.Context, stack []uint64) error
}
