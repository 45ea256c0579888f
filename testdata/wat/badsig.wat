;; badsig.wat: exports corral_buffer and corral_call with wrong signatures.
(module
  (import "corral_v1" "set_result" (func $set_result (param i32 i32)))
  (memory (export "memory") 1)
  (func (export "corral_abi_v1") (result i32) (i32.const 4))
  (func (export "corral_buffer") (param $size i64) (result i32) (i32.const 1024))
  (func (export "corral_call") (param $op i32) (param $len i32) (result i64) (i64.const 0)))
