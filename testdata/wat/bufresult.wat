;; bufresult.wat: corral_buffer calls set_result when asked for more than
;; the host's minimum of 1024 bytes (a request over 1 KiB), and corral_call
;; then returns OK without calling it. ABI.md §8: set_result outside
;; corral_call traps, so such a call fails; it is never answered with
;; what corral_buffer handed over.
(module
  (import "corral_v1" "set_result" (func $set_result (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "{\"name\":\"bufresult\",\"version\":\"1.0.0\",\"abi\":1,\"schemes\":[\"bufresult\"]}")
  (data (i32.const 1152) "\"from corral_buffer\"")
  (func (export "corral_abi_v1") (result i32) (i32.const 4))
  (func (export "corral_buffer") (param $size i32) (result i32)
    (if (i32.gt_u (local.get $size) (i32.const 1024))
      (then (call $set_result (i32.const 1152) (i32.const 20))))
    (i32.const 8192))
  (func (export "corral_call") (param $op i32) (param $len i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $set_result (i32.const 1024) (i32.const 70))))
    (i32.const 0)))
