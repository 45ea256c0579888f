// Package interrupt rewrites a WebAssembly module so that its host can
// stop a running call at any moment, without engine support: the module
// gets one more mutable i32 global, the interrupt flag, exported as
// [FlagExport], and every function entry and every loop body starts by
// testing it:
//
//	global.get $flag
//	if
//	  unreachable
//	end
//
// Setting the flag to 1 from any goroutine makes the running call trap at
// its next loop iteration or function entry; code without loops or calls
// runs a bounded number of instructions anyway. The flag is the same idea
// as wasmtime's epoch interruption, done at the module level so that
// wazero compiles it into one load and one branch.
//
// The rewrite decodes every instruction of the WebAssembly 2.0 feature set
// that wazero accepts by default (MVP, sign extension, non-trapping
// float-to-int, bulk memory, reference types, multi-value, SIMD) and
// refuses anything else. Guest code cannot reach the flag: an original
// module naming a global index at or beyond its own global count (in code,
// constant expressions or exports) is refused, since such a module was
// invalid before the rewrite made the index exist. A start function is
// removed from the start section and exported as [StartExport], so that
// the host runs it as an ordinary, interruptible call after instantiation.
//
// Only the global, export, start, code and data sections change (the
// data section's segments are joined where that is safe, data.go); every
// other section, custom sections included, is copied byte for byte.
package interrupt

import (
	"errors"
	"fmt"
)

const (
	// FlagExport is the export name of the interrupt flag: a mutable i32
	// global, 0 while the guest may run, non-zero to stop it.
	FlagExport = "corral:interrupt"
	// StartExport is the export name the rewrite gives the module's start
	// function, if it has one. The host must call it once, before anything
	// else, in place of the engine.
	StartExport = "corral:start"
)

// Reserved reports whether name is an export name the rewrite adds.
func Reserved(name string) bool { return name == FlagExport || name == StartExport }

// Info describes one rewrite.
type Info struct {
	// Functions is the number of function bodies instrumented.
	Functions int
	// Loops is the number of loop bodies instrumented.
	Loops int
	// FlagIndex is the interrupt flag's global index.
	FlagIndex uint32
	// Start reports that the module had a start function, now exported as
	// StartExport.
	Start bool
	// Coalesced is the number of data segments joined to the one before
	// them (data.go).
	Coalesced int
	// Shape is what the decoder measured of the original module.
	Shape Shape
}

// Shape is what decoding a module tells about its size and surface, for a
// host to check limits on before it spends a compile on the module.
type Shape struct {
	// Functions is the number of function bodies.
	Functions int
	// MaxBodyBytes is the size of the largest function body.
	MaxBodyBytes int
	// MaxDepth is the deepest nesting of block, loop and if in one body
	// (0 for a body without any).
	MaxDepth int
	// MaxLocals is the most locals one function declares, parameters not
	// counted.
	MaxLocals uint64
	// Imports and Exports are the module's, in order.
	Imports []Extern
	Exports []Extern
}

// Extern kinds, as the binary format numbers them.
const (
	KindFunc   byte = 0x00
	KindTable  byte = 0x01
	KindMemory byte = 0x02
	KindGlobal byte = 0x03
)

// Extern is one import or export. Module is empty for an export; Params
// and Results are set for a function, as value type bytes.
type Extern struct {
	Module, Name    string
	Kind            byte
	Params, Results []byte
}

// Section ids of the WebAssembly 2.0 binary format.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
)

// rank orders the non-custom sections as the format requires (data count
// comes before code).
var rank = map[byte]int{
	secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5, secGlobal: 6,
	secExport: 7, secStart: 8, secElement: 9, secDataCount: 10, secCode: 11, secData: 12,
}

// funcType is a function type's parameter and result value types.
type funcType struct{ params, results []byte }

type section struct {
	id   byte
	body []byte
}

// module is what the rewrite learns about the input.
type module struct {
	sections []section

	types          []funcType
	funcTypes      []uint32 // type index of every function, imports first
	importedFuncs  uint32
	globals        uint32 // the original count, imports included
	hasStart       bool
	hasMemory      bool // imported or defined
	memoryImported bool
	startDeclared  bool // the start function is exported or in an element or constant expression
	inCode         bool // decoding function bodies, not constant expressions
	start          uint32
	check          []byte // the instructions inserted (checkCode)
	info           Info
	measure        bool // Measure: decode and measure, write nothing
	maxDepth       int  // Measure: refuse nesting deeper than this (0: no limit)
}

// Instrument returns the rewritten module. It refuses a module it cannot
// decode completely, one that uses features beyond WebAssembly 2.0, one
// that exports a reserved name, and one whose code or constant
// expressions name a global beyond its own. The result still needs the
// engine's validation: Instrument checks structure, not types.
func Instrument(wasm []byte) ([]byte, Info, error) {
	m := &module{}
	if err := m.split(wasm); err != nil {
		return nil, Info{}, fmt.Errorf("interrupt: %w", err)
	}
	if err := m.scan(); err != nil {
		return nil, Info{}, fmt.Errorf("interrupt: %w", err)
	}
	out, err := m.emit(make([]byte, 0, len(wasm)+len(wasm)/16+64))
	if err != nil {
		return nil, Info{}, fmt.Errorf("interrupt: %w", err)
	}
	return out, m.info, nil
}

// ErrTooDeep is the cause of Measure's refusal of a function nested
// deeper than its maxDepth.
var ErrTooDeep = errors.New("blocks nested too deep")

// Measure decodes wasm as Instrument does, without rewriting it, and
// returns its shape: the first, cheap gate before a compile. It refuses
// what Instrument refuses and, when maxDepth is not 0, stops at the first
// block nested deeper than maxDepth, with an error wrapping ErrTooDeep.
func Measure(wasm []byte, maxDepth int) (Shape, error) {
	m := &module{measure: true, maxDepth: maxDepth}
	if err := m.split(wasm); err != nil {
		return Shape{}, fmt.Errorf("interrupt: %w", err)
	}
	if err := m.scan(); err != nil {
		return Shape{}, fmt.Errorf("interrupt: %w", err)
	}
	if b := m.find(secCode); b != nil {
		m.inCode = true
		if _, err := m.code(nil, b); err != nil {
			return Shape{}, fmt.Errorf("interrupt: code section: %w", err)
		}
	}
	return m.info.Shape, nil
}

var header = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// split checks the header and cuts the module into its sections, which
// must appear at most once each and in order.
func (m *module) split(wasm []byte) error {
	if len(wasm) < 8 || string(wasm[:8]) != string(header) {
		return errors.New("not a WebAssembly 1.0 binary module (bad magic or version)")
	}
	r := reader{b: wasm, pos: 8}
	last := 0
	for !r.done() {
		id, _ := r.byte()
		size, err := r.u32()
		if err != nil {
			return fmt.Errorf("section %d size: %w", id, err)
		}
		body, err := r.bytes(size)
		if err != nil {
			return fmt.Errorf("section %d: size %d: %w", id, size, err)
		}
		if id != secCustom {
			k, ok := rank[id]
			if !ok {
				return fmt.Errorf("unsupported section id %d", id)
			}
			if k <= last {
				return fmt.Errorf("section %d is out of order or repeated", id)
			}
			last = k
		}
		m.sections = append(m.sections, section{id, body})
	}
	return nil
}

func (m *module) find(id byte) []byte {
	for _, s := range m.sections {
		if s.id == id {
			return s.body
		}
	}
	return nil
}

// scan reads the sections that define index spaces and checks those that
// can name a global.
func (m *module) scan() error {
	if b := m.find(secType); b != nil {
		if err := m.scanTypes(b); err != nil {
			return fmt.Errorf("type section: %w", err)
		}
	}
	if b := m.find(secImport); b != nil {
		if err := m.scanImports(b); err != nil {
			return fmt.Errorf("import section: %w", err)
		}
	}
	if b := m.find(secFunction); b != nil {
		r := reader{b: b}
		n, err := r.u32()
		if err != nil {
			return fmt.Errorf("function section: %w", err)
		}
		for range n {
			t, err := r.u32()
			if err != nil {
				return fmt.Errorf("function section: %w", err)
			}
			m.funcTypes = append(m.funcTypes, t)
		}
		if !r.done() {
			return errors.New("function section: trailing bytes")
		}
	}
	m.hasMemory = m.hasMemory || m.find(secMemory) != nil
	var defined uint32
	if b := m.find(secGlobal); b != nil {
		r := reader{b: b}
		n, err := r.u32()
		if err != nil {
			return fmt.Errorf("global section: %w", err)
		}
		defined = n
	}
	if uint64(m.globals)+uint64(defined) >= 1<<32-2 {
		return errors.New("too many globals")
	}
	m.globals += defined
	m.info.FlagIndex = m.globals
	m.check = checkCode(m.globals, m.globals+1)

	if b := m.find(secStart); b != nil {
		if err := m.scanStart(b); err != nil {
			return fmt.Errorf("start section: %w", err)
		}
	}
	if b := m.find(secGlobal); b != nil {
		if err := m.scanGlobals(b); err != nil {
			return fmt.Errorf("global section: %w", err)
		}
	}
	if b := m.find(secExport); b != nil {
		if err := m.scanExports(b); err != nil {
			return fmt.Errorf("export section: %w", err)
		}
	}
	if b := m.find(secElement); b != nil {
		if err := m.scanElements(b); err != nil {
			return fmt.Errorf("element section: %w", err)
		}
	}
	if b := m.find(secData); b != nil {
		if err := m.scanData(b); err != nil {
			return fmt.Errorf("data section: %w", err)
		}
	}
	return nil
}

func (m *module) scanTypes(b []byte) error {
	r := reader{b: b}
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := range n {
		form, err := r.byte()
		if err != nil {
			return err
		}
		if form != 0x60 {
			return fmt.Errorf("type %d: unsupported form %#x", i, form)
		}
		params, err := valTypes(&r)
		if err != nil {
			return fmt.Errorf("type %d: %w", i, err)
		}
		results, err := valTypes(&r)
		if err != nil {
			return fmt.Errorf("type %d: %w", i, err)
		}
		m.types = append(m.types, funcType{params, results})
	}
	if !r.done() {
		return errors.New("trailing bytes")
	}
	return nil
}

// valTypes reads a vector of value types.
func valTypes(r *reader) ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	start := r.pos
	for range n {
		t, err := r.byte()
		if err != nil {
			return nil, err
		}
		if !isValType(t) {
			return nil, fmt.Errorf("unsupported value type %#x", t)
		}
	}
	return r.b[start:r.pos], nil
}

func isValType(t byte) bool {
	switch t {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f: // i32 i64 f32 f64 v128 funcref externref
		return true
	}
	return false
}

func (m *module) scanImports(b []byte) error {
	r := reader{b: b}
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := range n {
		mod, err := r.name()
		if err != nil {
			return fmt.Errorf("import %d: %w", i, err)
		}
		name, err := r.name()
		if err != nil {
			return fmt.Errorf("import %d: %w", i, err)
		}
		kind, err := r.byte()
		if err != nil {
			return fmt.Errorf("import %d: %w", i, err)
		}
		imp := Extern{Module: string(mod), Name: string(name), Kind: kind}
		switch kind {
		case 0x00: // function
			t, err := r.u32()
			if err != nil {
				return fmt.Errorf("import %d: %w", i, err)
			}
			if uint64(t) >= uint64(len(m.types)) {
				return fmt.Errorf("import %d: unknown type %d", i, t)
			}
			imp.Params, imp.Results = m.types[t].params, m.types[t].results
			m.funcTypes = append(m.funcTypes, t)
			m.importedFuncs++
		case 0x01: // table
			rt, err := r.byte()
			if err != nil {
				return fmt.Errorf("import %d: %w", i, err)
			}
			if rt != 0x70 && rt != 0x6f {
				return fmt.Errorf("import %d: unsupported table type %#x", i, rt)
			}
			if err := limits(&r); err != nil {
				return fmt.Errorf("import %d: %w", i, err)
			}
		case 0x02: // memory
			if err := limits(&r); err != nil {
				return fmt.Errorf("import %d: %w", i, err)
			}
			m.hasMemory, m.memoryImported = true, true
		case 0x03: // global
			t, err := r.byte()
			if err != nil {
				return fmt.Errorf("import %d: %w", i, err)
			}
			if !isValType(t) {
				return fmt.Errorf("import %d: unsupported value type %#x", i, t)
			}
			if _, err := r.byte(); err != nil {
				return fmt.Errorf("import %d: %w", i, err)
			}
			m.globals++
		default:
			return fmt.Errorf("import %d: unsupported kind %#x", i, kind)
		}
		m.info.Shape.Imports = append(m.info.Shape.Imports, imp)
	}
	if !r.done() {
		return errors.New("trailing bytes")
	}
	return nil
}

// limits reads table or memory limits: 0x00 min, or 0x01 min max.
func limits(r *reader) error {
	flag, err := r.byte()
	if err != nil {
		return err
	}
	if flag > 1 {
		return fmt.Errorf("unsupported limits flag %#x (shared or 64-bit memory)", flag)
	}
	if _, err := r.u32(); err != nil {
		return err
	}
	if flag == 1 {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

func (m *module) scanGlobals(b []byte) error {
	r := reader{b: b}
	n, _ := r.u32() // read by scan
	for i := range n {
		t, err := r.byte()
		if err != nil {
			return fmt.Errorf("global %d: %w", i, err)
		}
		if !isValType(t) {
			return fmt.Errorf("global %d: unsupported value type %#x", i, t)
		}
		if _, err := r.byte(); err != nil {
			return fmt.Errorf("global %d: %w", i, err)
		}
		if err := m.constExpr(&r); err != nil {
			return fmt.Errorf("global %d: %w", i, err)
		}
	}
	if !r.done() {
		return errors.New("trailing bytes")
	}
	return nil
}

func (m *module) scanExports(b []byte) error {
	r := reader{b: b}
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := range n {
		name, err := r.name()
		if err != nil {
			return fmt.Errorf("export %d: %w", i, err)
		}
		if Reserved(string(name)) {
			return fmt.Errorf("export %d: the name %q is reserved for the host", i, name)
		}
		kind, err := r.byte()
		if err != nil {
			return fmt.Errorf("export %d: %w", i, err)
		}
		idx, err := r.u32()
		if err != nil {
			return fmt.Errorf("export %d: %w", i, err)
		}
		if kind > 0x03 {
			return fmt.Errorf("export %d: unsupported kind %#x", i, kind)
		}
		if kind == 0x00 && m.hasStart && idx == m.start {
			m.startDeclared = true
		}
		if kind == 0x02 && !m.hasMemory {
			return fmt.Errorf("export %d: memory export in a module without memory", i)
		}
		if kind == 0x03 && idx >= m.globals {
			return fmt.Errorf("export %d: global index %d out of range (%d globals)", i, idx, m.globals)
		}
		exp := Extern{Name: string(name), Kind: kind}
		if kind == 0x00 {
			t, err := m.funcType(idx)
			if err != nil {
				return fmt.Errorf("export %d: %w", i, err)
			}
			exp.Params, exp.Results = t.params, t.results
		}
		m.info.Shape.Exports = append(m.info.Shape.Exports, exp)
	}
	if !r.done() {
		return errors.New("trailing bytes")
	}
	return nil
}

// scanStart checks what the engine would have checked of the start
// function, since the rewritten module no longer names it as such: it
// exists and has type [] -> [].
func (m *module) scanStart(b []byte) error {
	r := reader{b: b}
	idx, err := r.u32()
	if err != nil {
		return err
	}
	if !r.done() {
		return errors.New("trailing bytes")
	}
	t, err := m.funcType(idx)
	if err != nil {
		return err
	}
	if len(t.params)+len(t.results) > 0 {
		return fmt.Errorf("function %d is not of type [] -> []", idx)
	}
	m.hasStart, m.start = true, idx
	m.info.Start = true
	return nil
}

// funcType returns the type of function idx.
func (m *module) funcType(idx uint32) (funcType, error) {
	if uint64(idx) >= uint64(len(m.funcTypes)) {
		return funcType{}, fmt.Errorf("function index %d out of range", idx)
	}
	t := m.funcTypes[idx]
	if uint64(t) >= uint64(len(m.types)) {
		return funcType{}, fmt.Errorf("function %d has unknown type %d", idx, t)
	}
	return m.types[t], nil
}

func (m *module) scanElements(b []byte) error {
	r := reader{b: b}
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := range n {
		if err := m.element(&r); err != nil {
			return fmt.Errorf("segment %d: %w", i, err)
		}
	}
	if !r.done() {
		return errors.New("trailing bytes")
	}
	return nil
}

// element reads one element segment in any of its eight encodings.
func (m *module) element(r *reader) error {
	flags, err := r.u32()
	if err != nil {
		return err
	}
	if flags > 7 {
		return fmt.Errorf("unsupported flags %d", flags)
	}
	if flags&0x02 != 0 && flags&0x01 == 0 { // active with a table index
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	if flags&0x01 == 0 { // active: an offset
		if err := m.constExpr(r); err != nil {
			return err
		}
	}
	if flags&0x03 != 0 { // elemkind or reftype
		k, err := r.byte()
		if err != nil {
			return err
		}
		if flags&0x04 == 0 && k != 0x00 {
			return fmt.Errorf("unsupported element kind %#x", k)
		}
		if flags&0x04 != 0 && k != 0x70 && k != 0x6f {
			return fmt.Errorf("unsupported reference type %#x", k)
		}
	}
	cnt, err := r.u32()
	if err != nil {
		return err
	}
	for range cnt {
		if flags&0x04 == 0 {
			idx, err := r.u32()
			if err != nil {
				return err
			}
			if err := m.refFunc(idx); err != nil {
				return err
			}
		} else if err := m.constExpr(r); err != nil {
			return err
		}
	}
	return nil
}

func (m *module) scanData(b []byte) error {
	r := reader{b: b}
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := range n {
		flags, err := r.u32()
		if err != nil {
			return fmt.Errorf("segment %d: %w", i, err)
		}
		switch flags {
		case 0:
		case 1:
		case 2:
			if _, err := r.u32(); err != nil {
				return fmt.Errorf("segment %d: %w", i, err)
			}
		default:
			return fmt.Errorf("segment %d: unsupported flags %d", i, flags)
		}
		if flags != 1 && !m.hasMemory {
			return fmt.Errorf("segment %d: active data segment in a module without memory", i)
		}
		if flags != 1 {
			if err := m.constExpr(&r); err != nil {
				return fmt.Errorf("segment %d: %w", i, err)
			}
		}
		if _, err := r.name(); err != nil { // the bytes: a vector, like a name
			return fmt.Errorf("segment %d: %w", i, err)
		}
	}
	if !r.done() {
		return errors.New("trailing bytes")
	}
	return nil
}

// constExpr reads a constant expression up to its end, refusing any
// global index beyond the original ones.
func (m *module) constExpr(r *reader) error {
	depth := 1
	for depth > 0 {
		at := r.pos
		op, err := r.byte()
		if err != nil {
			return err
		}
		d, _, err := m.instr(r, op)
		if err != nil {
			return fmt.Errorf("constant expression at offset %#x: %w", at, err)
		}
		depth += d
	}
	return nil
}

// emit writes the rewritten module after the header.
func (m *module) emit(out []byte) ([]byte, error) {
	out = append(out, header...)
	sawMemory := m.hasMemory
	var sawGlobal, sawExport bool
	// Sections the module lacks go before the first section that must
	// follow them, or before the trailing custom sections, which stay last.
	trailing := len(m.sections)
	for trailing > 0 && m.sections[trailing-1].id == secCustom {
		trailing--
	}
	for i, s := range m.sections {
		if s.id != secCustom || i == trailing {
			rk := rank[s.id]
			if i == trailing {
				rk = len(rank) + 1
			}
			if rk > rank[secMemory] && !sawMemory {
				out = appendSection(out, secMemory, noMemory)
				sawMemory = true
			}
			if rk > rank[secGlobal] && !sawGlobal {
				out = appendSection(out, secGlobal, m.globalSection(nil))
				sawGlobal = true
			}
			if rk > rank[secExport] && !sawExport {
				out = appendSection(out, secExport, m.exportSection(nil))
				sawExport = true
			}
		}
		switch s.id {
		case secGlobal:
			out = appendSection(out, secGlobal, m.globalSection(s.body))
			sawGlobal = true
		case secExport:
			out = appendSection(out, secExport, m.exportSection(s.body))
			sawExport = true
		case secStart:
			// Dropped: the function is exported as StartExport.
		case secData:
			out = appendSection(out, secData, m.dataSection(s.body))
		case secCode:
			m.inCode = true
			// Written in place behind a 5-byte (padded) size, patched after.
			out = append(out, secCode, 0x80, 0x80, 0x80, 0x80, 0x00)
			at := len(out)
			var err error
			out, err = m.code(out, s.body)
			if err != nil {
				return nil, fmt.Errorf("code section: %w", err)
			}
			putPaddedU32(out[at-5:at], uint32(len(out)-at))
		default:
			out = appendSection(out, s.id, s.body)
		}
	}
	if !sawMemory {
		out = appendSection(out, secMemory, noMemory)
	}
	if !sawGlobal {
		out = appendSection(out, secGlobal, m.globalSection(nil))
	}
	if !sawExport {
		out = appendSection(out, secExport, m.exportSection(nil))
	}
	return out, nil
}

// putPaddedU32 writes v as a 5-byte unsigned LEB128 into b.
func putPaddedU32(b []byte, v uint32) {
	for i := range 4 {
		b[i] = byte(v>>(7*i))&0x7f | 0x80
	}
	b[4] = byte(v >> 28)
}

func appendSection(out []byte, id byte, body []byte) []byte {
	out = append(out, id)
	out = appendU32(out, uint32(len(body)))
	return append(out, body...)
}

// noMemory is the memory section given to a module without memory, so
// that the yield has a memory.grow to run: one memory of 0 pages.
var noMemory = []byte{0x01, 0x00, 0x00}

// globalSection returns the global section with the flag (a mutable i32
// initialised to 0) and the yield budget (a mutable i32 initialised to
// YieldEvery) appended.
func (m *module) globalSection(orig []byte) []byte {
	var n uint32
	var rest []byte
	if orig != nil {
		r := reader{b: orig}
		n, _ = r.u32() // checked by scan
		rest = orig[r.pos:]
	}
	out := appendU32(nil, n+2)
	out = append(out, rest...)
	out = append(out, 0x7f, 0x01, 0x41, 0x00, 0x0b)
	out = append(out, 0x7f, 0x01, 0x41)
	out = appendS32(out, YieldEvery)
	return append(out, 0x0b)
}

// exportSection returns the export section with the flag's export and,
// if there is a start function, the start export appended.
func (m *module) exportSection(orig []byte) []byte {
	var n uint32
	var rest []byte
	if orig != nil {
		r := reader{b: orig}
		n, _ = r.u32() // checked by scan
		rest = orig[r.pos:]
	}
	add := uint32(1)
	if m.hasStart {
		add++
	}
	out := appendU32(nil, n+add)
	out = append(out, rest...)
	out = appendU32(out, uint32(len(FlagExport)))
	out = append(out, FlagExport...)
	out = append(out, 0x03)
	out = appendU32(out, m.globals)
	if m.hasStart {
		out = appendU32(out, uint32(len(StartExport)))
		out = append(out, StartExport...)
		out = append(out, 0x00)
		out = appendU32(out, m.start)
	}
	return out
}

// code rewrites the code section into out.
func (m *module) code(out, b []byte) ([]byte, error) {
	r := reader{b: b}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	out = appendU32(out, n)
	var body []byte
	for i := range n {
		fn := uint64(m.importedFuncs) + uint64(i)
		size, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", fn, err)
		}
		in, err := r.bytes(size)
		if err != nil {
			return nil, fmt.Errorf("function %d: body of %d bytes: %w", fn, size, err)
		}
		body, err = m.body(body[:0], in)
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", fn, err)
		}
		m.info.Shape.MaxBodyBytes = max(m.info.Shape.MaxBodyBytes, len(in))
		if !m.measure {
			out = appendU32(out, uint32(len(body)))
			out = append(out, body...)
		}
		m.info.Functions++
		m.info.Shape.Functions++
	}
	if !r.done() {
		return nil, errors.New("trailing bytes")
	}
	return out, nil
}

// body rewrites one function body: its locals, the check, then its
// instructions with the check after every loop's block type.
func (m *module) body(out, b []byte) ([]byte, error) {
	r := reader{b: b}
	decls, err := r.u32()
	if err != nil {
		return nil, fmt.Errorf("locals: %w", err)
	}
	var locals uint64
	for range decls {
		n, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("locals: %w", err)
		}
		locals += uint64(n)
		t, err := r.byte()
		if err != nil {
			return nil, fmt.Errorf("locals: %w", err)
		}
		if !isValType(t) {
			return nil, fmt.Errorf("locals: unsupported value type %#x", t)
		}
	}
	sh := &m.info.Shape
	sh.MaxLocals = max(sh.MaxLocals, locals)
	if !m.measure {
		out = append(out, b[:r.pos]...)
		out = append(out, m.check...)
	}
	last := r.pos
	for depth := 1; depth > 0; {
		at := r.pos
		op, err := r.byte()
		if err != nil {
			return nil, fmt.Errorf("offset %#x: %w", at, err)
		}
		d, loop, err := m.instr(&r, op)
		if err != nil {
			return nil, fmt.Errorf("offset %#x: %w", at, err)
		}
		depth += d
		sh.MaxDepth = max(sh.MaxDepth, depth-1)
		if m.maxDepth > 0 && depth-1 > m.maxDepth {
			return nil, fmt.Errorf("offset %#x: %w: more than %d", at, ErrTooDeep, m.maxDepth)
		}
		if loop {
			m.info.Loops++
			if !m.measure {
				out = append(out, b[last:r.pos]...)
				out = append(out, m.check...)
				last = r.pos
			}
		}
	}
	if !r.done() {
		return nil, fmt.Errorf("%d bytes after the body's end", len(b)-r.pos)
	}
	if m.measure {
		return nil, nil
	}
	return append(out, b[last:]...), nil
}

// YieldEvery is how many checks run between two yields to the Go
// scheduler.
const YieldEvery = 1024

// checkCode returns the instructions inserted at every function entry and
// loop body, given the flag's and the budget's global indices:
//
//	global.get $flag
//	if
//	  unreachable              ;; the host asked the call to stop
//	end
//	global.get $budget
//	i32.const 1
//	i32.sub
//	global.set $budget
//	global.get $budget
//	i32.eqz
//	if                         ;; every YieldEvery checks
//	  i32.const 0
//	  memory.grow              ;; grows nothing, but leaves native code
//	  drop
//	  i32.const YieldEvery
//	  global.set $budget
//	end
//
// The yield exists for the Go runtime, not for the host: wazero runs
// guest code as if it were one Go function without safe points, so a
// garbage collection waiting to stop the world would wait for the guest
// call to return — and the goroutine that raises the flag waits with it.
// memory.grow(0) leaves native code for Go, where the goroutine can be
// preempted, so the world stops within YieldEvery checks.
func checkCode(flag, budget uint32) []byte {
	b := appendU32([]byte{0x23}, flag)
	b = append(b, 0x04, 0x40, 0x00, 0x0b)
	b = appendU32(append(b, 0x23), budget)
	b = append(b, 0x41, 0x01, 0x6b)
	b = appendU32(append(b, 0x24), budget)
	b = appendU32(append(b, 0x23), budget)
	b = append(b, 0x45, 0x04, 0x40, 0x41, 0x00, 0x40, 0x00, 0x1a, 0x41)
	b = appendS32(b, YieldEvery)
	b = appendU32(append(b, 0x24), budget)
	return append(b, 0x0b)
}
