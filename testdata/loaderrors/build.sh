#!/usr/bin/env bash
# Rebuilds the load-error fixtures of this directory with the real
# toolchains (Debian's clang, lld, wasi-libc; rustc and cargo by path),
# each a module built the wrong way, committed next to its source. The
# tests (host/plugin TestAuthorLoadErrors, cmd/corral TestPluginCheckExplains)
# check the cause and fix the host gives for each. The Go command module is
# built by the test itself from gocommand/ (4 MB is too much to commit).
#
#   c-reactor.wasm       guest.c, right: -mexec-model=reactor (loads; the control)
#   c-command.wasm       guest.c without -mexec-model=reactor: a _start command
#   c-nomarker.wasm      guest.c without its corral_abi_v1 export
#   c-describe-trap.wasm guest.c whose describe traps
#   env.wasm             env.c for --target=wasm32 (no WASI): imports from "env"
#   library.wasm         library.c, a WASI reactor that is not a plugin (no corral exports)
#   wbindgen.wasm        wbindgen.wat with wat2wasm: wasm-bindgen's import module (no
#                        wasm-bindgen is packaged here, so the shape is written by hand)
#   native.elf           native.c for the build machine
#   truncated.wasm       the first 250 of c-reactor.wasm's 371 bytes: cut mid-section
#   component.wasm       a component (layer 1 header) wrapping c-reactor.wasm as its
#                        core module section; no component toolchain is packaged here,
#                        so its 10 header bytes are written by printf
#   text.wasm            ../wat/good.wat copied under a .wasm name
#   rust-describe.wasm   rust-describe/: the Rust SDK with a resource outside the schemes
#   as-abort.wasm        as-abort.ts with asc 0.28.20 (sdk/assemblyscript's) without --use abort=
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
root=$(cd ../.. && pwd)
bash "$root/sdk/install-toolchains.sh" c rust assemblyscript
command -v wat2wasm >/dev/null || { echo "build.sh: wat2wasm is missing (Debian's wabt; make testdata installs it)" >&2; exit 1; }

wasi=(clang --target=wasm32-wasi --sysroot=/usr -O2 -Wl,--strip-all)
"${wasi[@]}" -mexec-model=reactor guest.c -o c-reactor.wasm
"${wasi[@]}" -DCOMMAND guest.c -o c-command.wasm
"${wasi[@]}" -mexec-model=reactor -DNO_MARKER guest.c -o c-nomarker.wasm
"${wasi[@]}" -mexec-model=reactor -DDESCRIBE_TRAPS guest.c -o c-describe-trap.wasm
"${wasi[@]}" -mexec-model=reactor library.c -o library.wasm
wat2wasm wbindgen.wat -o wbindgen.wasm
clang --target=wasm32 -O2 -nostdlib -Wl,--no-entry -Wl,--allow-undefined -Wl,--strip-all env.c -o env.wasm
clang -O2 -s native.c -o native.elf
head -c 250 c-reactor.wasm >truncated.wasm
core_len=$(wc -c <c-reactor.wasm)
{
	printf '\0asm\r\0\1\0\1'
	# the core module section's size as unsigned LEB128 (two bytes: 128..16383)
	printf "\\x$(printf %02x $((core_len % 128 + 128)))\\x$(printf %02x $((core_len / 128)))"
	cat c-reactor.wasm
} >component.wasm
cp ../wat/good.wat text.wasm
(cd rust-describe && RUSTC=/usr/bin/rustc CARGO_TARGET_DIR="$root/build/rust" /usr/bin/cargo build --offline --release --quiet --target wasm32-wasi)
cp "$root/build/rust/wasm32-wasi/release/rust_describe.wasm" rust-describe.wasm
"$root/sdk/assemblyscript/node_modules/.bin/asc" as-abort.ts -O3z --runtime stub -o as-abort.wasm
for f in *.wasm native.elf; do echo "built $f ($(wc -c <"$f") bytes)"; done
