;; wrongabi.wat: built for a future ABI major 2: exports corral_abi_v2 and
;; imports from corral_v2.
(module
  (import "corral_v2" "set_result" (func $set_result (param i32 i32)))
  (memory (export "memory") 1)
  (func (export "corral_abi_v2") (result i32) (i32.const 0))
  (func (export "corral_buffer") (param $size i32) (result i32) (i32.const 1024))
  (func (export "corral_call") (param $op i32) (param $len i32) (result i32) (i32.const 0)))
