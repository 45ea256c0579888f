package interrupt

import (
	"slices"
	"sort"
)

// The rewrite also makes a module's active data segments fewer: a run of
// segments that follow each other in memory, with at most CoalesceGap
// bytes between each and the next, becomes one segment holding the run's
// bytes and zeros in the gaps. A Go guest's linker writes tens of
// thousands of segments of a few bytes each (one per run of non-zero
// bytes), and an engine pays for every segment when it decodes, validates
// and instantiates the module; the zeros cost far less.
//
// What runs is the same module: a defined memory starts zeroed, so the
// zeros only write what was already there, as long as no segment written
// before reached into the gap they fill. A run is therefore made only of
// consecutive segments, active on memory 0 at constant offsets, each
// starting at or after the end of the one before, whose gaps no earlier
// segment's bytes overlap. Segment indices change, so a module that can
// name one (its data count section, required by memory.init and
// data.drop) keeps its segments as they are, as does a module whose
// memory is imported (its gaps may hold the host's bytes).

// CoalesceGap is the widest gap, in bytes, that the rewrite fills with
// zeros to join two data segments.
const CoalesceGap = 64

// dataSegment is one segment of a data section, as read.
type dataSegment struct {
	raw    []byte // the whole encoded segment
	bytes  []byte // its initial bytes
	offset uint64 // for a constant active segment on memory 0
	simple bool   // active on memory 0 at a constant offset
	active bool
}

// dataSection returns the data section b with its runs of segments
// joined, or b itself when it cannot be.
func (m *module) dataSection(b []byte) []byte {
	if m.memoryImported || m.find(secDataCount) != nil {
		return b
	}
	segs, ok := readSegments(b)
	if !ok {
		return b
	}
	// The zeros may not make the section much larger than it was (a
	// quarter, or a KiB for a small one): a module of one-byte segments
	// spaced CoalesceGap apart would otherwise come out many times its
	// size.
	limit := len(b) + max(len(b)/4, 1024)
	out := make([]byte, 0, limit)
	out = appendU32(out, 0) // the count, replaced below
	count := 0
	var run []dataSegment // the run being made
	var runEnd uint64     // the end of its last segment
	var written spans     // the bytes of every segment so far
	flush := func() {
		if len(run) > 1 && len(out)+int(runEnd-run[0].offset)+16 > limit {
			// Joined, this run would outgrow the limit: kept as it is.
			for _, s := range run {
				out = append(out, s.raw...)
			}
			count += len(run)
			run = run[:0]
			return
		}
		if len(run) == 1 {
			out = append(out, run[0].raw...)
		} else if len(run) > 1 {
			out = append(out, 0x00, 0x41)
			out = appendS32(out, int32(uint32(run[0].offset)))
			out = append(out, 0x0b)
			out = appendU32(out, uint32(runEnd-run[0].offset))
			at := run[0].offset
			for _, s := range run {
				for ; at < s.offset; at++ {
					out = append(out, 0)
				}
				out = append(out, s.bytes...)
				at += uint64(len(s.bytes))
			}
			m.info.Coalesced += len(run) - 1
		}
		if len(run) > 0 {
			count++
		}
		run = run[:0]
	}
	for _, s := range segs {
		if !s.simple {
			flush()
			out = append(out, s.raw...)
			count++
			if s.active { // may write anywhere: no run after it
				written.everywhere = true
			}
			continue
		}
		if len(run) == 0 || s.offset < runEnd || s.offset-runEnd > CoalesceGap || written.overlap(runEnd, s.offset) {
			flush()
		}
		run = append(run, s)
		runEnd = s.offset + uint64(len(s.bytes))
		written.add(s.offset, runEnd)
	}
	flush()
	if m.info.Coalesced == 0 {
		return b
	}
	n := appendU32(nil, uint32(count))
	return append(n, out[1:]...)
}

// readSegments decodes a data section that scan accepted; ok is false if
// it does not decode after all.
func readSegments(b []byte) ([]dataSegment, bool) {
	r := reader{b: b}
	n, err := r.u32()
	if err != nil {
		return nil, false
	}
	segs := make([]dataSegment, 0, n)
	for range n {
		start := r.pos
		var s dataSegment
		flags, err := r.u32()
		if err != nil {
			return nil, false
		}
		s.active = flags != 1
		if flags == 2 {
			if _, err := r.u32(); err != nil {
				return nil, false
			}
		}
		if s.active {
			exprAt := r.pos
			if !skipConstExpr(&r) {
				return nil, false
			}
			if c, ok := constI32(b[exprAt:r.pos]); ok && flags == 0 {
				s.simple, s.offset = true, uint64(c)
			}
		}
		if s.bytes, err = r.name(); err != nil {
			return nil, false
		}
		if s.simple && s.offset+uint64(len(s.bytes)) > 1<<32 {
			s.simple = false // out of any memory: left to trap as written
		}
		s.raw = b[start:r.pos]
		segs = append(segs, s)
	}
	return segs, r.done()
}

// skipConstExpr reads past a constant expression whose instructions scan
// checked: it ends at the first end opcode not inside an immediate, which
// for the instructions a data offset may hold (i32.const, global.get, and
// extended constants of i32 arithmetic) follows from their encoding.
func skipConstExpr(r *reader) bool {
	for {
		op, err := r.byte()
		if err != nil {
			return false
		}
		switch op {
		case 0x0b: // end
			return true
		case 0x41: // i32.const
			if _, err := r.signed(32); err != nil {
				return false
			}
		case 0x23: // global.get
			if _, err := r.u32(); err != nil {
				return false
			}
		case 0x6a, 0x6b, 0x6c: // i32.add, i32.sub, i32.mul
		default:
			return false
		}
	}
}

// constI32 returns the value of expr when it is exactly i32.const c; end.
func constI32(expr []byte) (uint32, bool) {
	r := reader{b: expr}
	if op, err := r.byte(); err != nil || op != 0x41 {
		return 0, false
	}
	c, err := r.signed(32)
	if err != nil {
		return 0, false
	}
	if op, err := r.byte(); err != nil || op != 0x0b || !r.done() {
		return 0, false
	}
	return uint32(int32(c)), true
}

// spans is a set of byte ranges, as sorted disjoint [start, end) pairs.
type spans struct {
	r []span
	// everywhere: a write of unknown place was made, or adding the
	// ranges out of order grew too costly; every range overlaps.
	everywhere bool
	moved      int // ranges moved to make room for one added out of order
}

type span struct{ start, end uint64 }

// maxMoved bounds the ranges moved by adding ranges out of order: a
// module's segments are mostly in order, so a few move, but a module
// listing its segments backwards would cost the square of their number.
const maxMoved = 1 << 20

// overlap reports whether [start, end) holds a byte of the set.
func (s *spans) overlap(start, end uint64) bool {
	if s.everywhere {
		return true
	}
	if start >= end {
		return false
	}
	i := sort.Search(len(s.r), func(i int) bool { return s.r[i].end > start })
	return i < len(s.r) && s.r[i].start < end
}

// add puts [start, end) in the set.
func (s *spans) add(start, end uint64) {
	if start >= end || s.everywhere {
		return
	}
	if n := len(s.r); n == 0 || s.r[n-1].end < start {
		s.r = append(s.r, span{start, end})
		return
	}
	if n := len(s.r); s.r[n-1].start <= start {
		s.r[n-1].end = max(s.r[n-1].end, end)
		return
	}
	// The ranges from i on touch or follow [start, end); those up to j
	// touch it and merge with it.
	i := sort.Search(len(s.r), func(i int) bool { return s.r[i].end >= start })
	j := i
	for j < len(s.r) && s.r[j].start <= end {
		start, end = min(start, s.r[j].start), max(end, s.r[j].end)
		j++
	}
	if s.moved += len(s.r) - j; s.moved > maxMoved {
		s.everywhere, s.r = true, nil
		return
	}
	s.r = slices.Replace(s.r, i, j, span{start, end})
}
