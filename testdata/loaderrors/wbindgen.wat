;; wbindgen.wat: the import shape wasm-bindgen leaves in a Rust module built
;; for a JavaScript host (no wasm-bindgen toolchain is packaged here, so the
;; shape is written by hand): __wbindgen_placeholder__ imports beside
;; otherwise right corral exports.
(module
  (import "__wbindgen_placeholder__" "__wbindgen_describe" (func (param i32)))
  (import "corral_v1" "set_result" (func $set_result (param i32 i32)))
  (memory (export "memory") 2)
  (func (export "corral_abi_v1") (result i32) (i32.const 2))
  (func (export "corral_buffer") (param i32) (result i32) (i32.const 65536))
  (func (export "corral_call") (param i32 i32) (result i32) (i32.const 1)))
