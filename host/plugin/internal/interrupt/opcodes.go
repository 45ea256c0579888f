package interrupt

import (
	"errors"
	"fmt"
)

// instr reads the immediates of the instruction whose opcode op was just
// read. It returns the change of block depth (+1 for block, loop and if,
// -1 for end) and whether the instruction is a loop, which leaves r just
// after the loop's block type. Opcodes outside WebAssembly 2.0 are
// refused.
func (m *module) instr(r *reader, op byte) (depth int, loop bool, err error) {
	// The two commonest shapes first, by table: no immediate, and one
	// u32 that needs no check.
	switch immediates[op] {
	case immNone:
		return 0, false, nil
	case immU32:
		_, err := r.u32()
		return 0, false, err
	}
	switch {
	case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if
		return 1, op == 0x03, blockType(r)
	case op == 0x0b: // end
		return -1, false, nil
	case op == 0x00, op == 0x01, op == 0x05, op == 0x0f, // unreachable nop else return
		op == 0x1a, op == 0x1b, // drop select
		op >= 0x45 && op <= 0xc4, // numeric, sign extension
		op == 0xd1:               // ref.is_null
		return 0, false, nil
	case op == 0x0c, op == 0x0d, op == 0x10, // br br_if call
		op >= 0x20 && op <= 0x22, // local.get/set/tee
		op == 0x25, op == 0x26:   // table.get/set
		_, err := r.u32()
		return 0, false, err
	case op == 0xd2: // ref.func
		idx, err := r.u32()
		if err != nil {
			return 0, false, err
		}
		return 0, false, m.refFunc(idx)
	case op == 0x23 || op == 0x24: // global.get, global.set
		idx, err := r.u32()
		if err != nil {
			return 0, false, err
		}
		if idx >= m.globals {
			return 0, false, fmt.Errorf("global index %d out of range (%d globals)", idx, m.globals)
		}
		return 0, false, nil
	case op == 0x0e: // br_table
		n, err := r.u32()
		if err != nil {
			return 0, false, err
		}
		for range uint64(n) + 1 { // the labels, then the default
			if _, err := r.u32(); err != nil {
				return 0, false, err
			}
		}
		return 0, false, nil
	case op == 0x11: // call_indirect type table
		if _, err := r.u32(); err != nil {
			return 0, false, err
		}
		_, err := r.u32()
		return 0, false, err
	case op == 0x1c: // select t*
		_, err := valTypes(r)
		return 0, false, err
	case op >= 0x28 && op <= 0x3e: // loads and stores
		if err := m.memoryUse(); err != nil {
			return 0, false, err
		}
		return 0, false, memarg(r)
	case op == 0x3f || op == 0x40: // memory.size, memory.grow
		if err := m.memoryUse(); err != nil {
			return 0, false, err
		}
		return 0, false, zero(r)
	case op == 0x41:
		_, err := r.signed(32)
		return 0, false, err
	case op == 0x42:
		_, err := r.signed(64)
		return 0, false, err
	case op == 0x43:
		return 0, false, r.skip(4)
	case op == 0x44:
		return 0, false, r.skip(8)
	case op == 0xd0: // ref.null t
		t, err := r.byte()
		if err != nil {
			return 0, false, err
		}
		if t != 0x70 && t != 0x6f {
			return 0, false, fmt.Errorf("ref.null: unsupported reference type %#x", t)
		}
		return 0, false, nil
	case op == 0xfc:
		return 0, false, m.misc(r)
	case op == 0xfd:
		return 0, false, m.simd(r)
	}
	return 0, false, fmt.Errorf("unsupported opcode %#x", op)
}

// Immediate shapes served by the table in instr; immOther is decoded by
// its switch.
const (
	immOther = iota
	immNone
	immU32
)

// immediates classifies the single-byte opcodes.
var immediates = func() (t [256]uint8) {
	for _, op := range []byte{0x00, 0x01, 0x05, 0x0f, 0x1a, 0x1b, 0xd1} {
		t[op] = immNone
	}
	for op := 0x45; op <= 0xc4; op++ {
		t[op] = immNone
	}
	for _, op := range []byte{0x0c, 0x0d, 0x10, 0x20, 0x21, 0x22, 0x25, 0x26} {
		t[op] = immU32
	}
	return t
}()

// refFunc notes a ref.func. Outside code it declares the function; in
// code it must name a declared one. The rewrite's export of the start
// function would declare it, so a reference the original did not declare
// is refused here.
func (m *module) refFunc(idx uint32) error {
	if !m.hasStart || idx != m.start {
		return nil
	}
	if !m.inCode {
		m.startDeclared = true
		return nil
	}
	if !m.startDeclared {
		return fmt.Errorf("ref.func %d: the start function is not declared", idx)
	}
	return nil
}

// memoryUse refuses a memory instruction in a module without memory:
// such a module is invalid, and the memory the rewrite adds for its
// yields must not make it valid.
func (m *module) memoryUse() error {
	if !m.hasMemory {
		return errors.New("memory instruction in a module without memory")
	}
	return nil
}

// blockType reads a block type: empty, one value type, or a type index
// (a non-negative s33).
func blockType(r *reader) error {
	c, err := r.peek()
	if err != nil {
		return err
	}
	if c == 0x40 || isValType(c) {
		r.pos++
		return nil
	}
	v, err := r.signed(33)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("unsupported block type %#x", c)
	}
	return nil
}

// memarg reads alignment and offset. An alignment with bit 6 set would
// carry a memory index (multi-memory), which WebAssembly 2.0 lacks.
func memarg(r *reader) error {
	align, err := r.u32()
	if err != nil {
		return err
	}
	if align&0x40 != 0 {
		return fmt.Errorf("unsupported memarg alignment %#x (multi-memory)", align)
	}
	_, err = r.u32()
	return err
}

// zero reads a reserved memory index, which must be the single byte 0.
func zero(r *reader) error {
	c, err := r.byte()
	if err != nil {
		return err
	}
	if c != 0 {
		return errors.New("reserved memory index byte is not zero")
	}
	return nil
}

// misc reads an 0xfc-prefixed instruction: saturating truncation, bulk
// memory and table operations.
func (m *module) misc(r *reader) error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	if sub == 8 || sub == 10 || sub == 11 {
		if err := m.memoryUse(); err != nil {
			return err
		}
	}
	switch {
	case sub <= 7: // trunc_sat
		return nil
	case sub == 8: // memory.init data 0
		if _, err := r.u32(); err != nil {
			return err
		}
		return zero(r)
	case sub == 9, sub == 13, sub == 15, sub == 16, sub == 17: // data.drop elem.drop table.grow/size/fill
		_, err := r.u32()
		return err
	case sub == 10: // memory.copy 0 0
		if err := zero(r); err != nil {
			return err
		}
		return zero(r)
	case sub == 11: // memory.fill 0
		return zero(r)
	case sub == 12 || sub == 14: // table.init elem table, table.copy table table
		if _, err := r.u32(); err != nil {
			return err
		}
		_, err := r.u32()
		return err
	}
	return fmt.Errorf("unsupported opcode 0xfc %d", sub)
}

// simdGaps are the unassigned opcodes in 0xfd 0x5e..0xff.
var simdGaps = map[uint32]bool{
	0x9a: true, 0xa2: true, 0xa5: true, 0xa6: true, 0xaf: true, 0xb0: true, 0xb2: true,
	0xb3: true, 0xb4: true, 0xbb: true, 0xc2: true, 0xc5: true, 0xc6: true, 0xcf: true,
	0xd0: true, 0xd2: true, 0xd3: true, 0xd4: true, 0xe2: true, 0xee: true,
}

// simd reads an 0xfd-prefixed (128-bit SIMD) instruction.
func (m *module) simd(r *reader) error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	if sub <= 11 || (sub >= 84 && sub <= 93) {
		if err := m.memoryUse(); err != nil {
			return err
		}
	}
	switch {
	case sub <= 11, sub == 92, sub == 93: // v128 loads and stores, load32/64_zero
		return memarg(r)
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		return r.skip(16)
	case sub >= 21 && sub <= 34: // extract_lane, replace_lane
		return r.skip(1)
	case sub >= 84 && sub <= 91: // load_lane, store_lane
		if err := memarg(r); err != nil {
			return err
		}
		return r.skip(1)
	case sub <= 0xff && !simdGaps[sub]:
		return nil
	}
	return fmt.Errorf("unsupported opcode 0xfd %#x", sub)
}
