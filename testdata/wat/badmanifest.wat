;; badmanifest.wat: its manifest has an invalid name, an ABI major the host
;; does not speak, and a scheme that is not an RFC 3986 scheme.
(module
  (import "corral_v1" "set_result" (func $set_result (param i32 i32)))
  (memory (export "memory") 2)
  (data (i32.const 1024) "{\"name\":\"Bad Name!\",\"version\":\"1\",\"abi\":7,\"schemes\":[\"no scheme\"]}\00")
  (func (export "corral_abi_v1") (result i32) (i32.const 4))

  (func (export "corral_buffer") (param $size i32) (result i32)
    (if (i32.gt_u (local.get $size) (i32.const 65536)) (then (return (i32.const 0))))
    (i32.const 65536))

  (func $strlen (param $p i32) (result i32) (local $e i32)
    (local.set $e (local.get $p))
    (block $done (loop $scan
      (br_if $done (i32.eqz (i32.load8_u (local.get $e))))
      (local.set $e (i32.add (local.get $e) (i32.const 1)))
      (br $scan)))
    (i32.sub (local.get $e) (local.get $p)))

  (func $reply (param $p i32)
    (call $set_result (local.get $p) (call $strlen (local.get $p))))

  (func (export "corral_call") (param $op i32) (param $len i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $reply (i32.const 1024)) (return (i32.const 0))))
    (call $reply (i32.const 1024))
    (i32.const 0)))
