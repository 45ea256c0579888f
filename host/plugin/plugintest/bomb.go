// Package plugintest builds hostile plugin files for tests that no
// hand-written fixture could hold.
package plugintest

// Bomb returns a module with the exports the corral ABI requires (memory,
// corral_abi_v1, corral_buffer, corral_call) whose corral_call nests depth
// empty blocks: 3 bytes a level, so 80,000 levels make a 240 KB file that
// wazero takes seconds to compile. It never gets as far as describing
// itself, so a loader refuses it either way.
func Bomb(depth int) []byte {
	m := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}
	m = section(m, 1, []byte{ // types: () -> i32, (i32) -> i32, (i32 i32) -> i32
		3,
		0x60, 0, 1, 0x7f,
		0x60, 1, 0x7f, 1, 0x7f,
		0x60, 2, 0x7f, 0x7f, 1, 0x7f,
	})
	m = section(m, 3, []byte{3, 0, 1, 2})    // functions of those types
	m = section(m, 5, []byte{1, 0x00, 0x01}) // one memory of 1 page
	exports := []byte{4}
	for i, name := range []string{"corral_abi_v1", "corral_buffer", "corral_call"} {
		exports = append(exports, byte(len(name)))
		exports = append(exports, name...)
		exports = append(exports, 0x00, byte(i))
	}
	exports = append(exports, 6)
	exports = append(exports, "memory"...)
	exports = append(exports, 0x02, 0)
	m = section(m, 7, exports)

	small := []byte{0x00, 0x41, 0x00, 0x0b} // no locals; i32.const 0; end
	bomb := []byte{0x00}
	for range depth {
		bomb = append(bomb, 0x02, 0x40) // block
	}
	for range depth {
		bomb = append(bomb, 0x0b) // end
	}
	bomb = append(bomb, 0x41, 0x00, 0x0b)
	code := []byte{3}
	for _, body := range [][]byte{small, small, bomb} {
		code = appendU32(code, uint32(len(body)))
		code = append(code, body...)
	}
	return section(m, 10, code)
}

func section(out []byte, id byte, body []byte) []byte {
	out = append(out, id)
	out = appendU32(out, uint32(len(body)))
	return append(out, body...)
}

func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
