;; flaky.wat: call_tool echoes its request like good.wat; complete traps;
;; get_prompt declares a well-formed guest error. Used to hammer the pool
;; with traps mixed into good calls.
(module
  (import "corral_v1" "set_result" (func $set_result (param i32 i32)))
  (memory (export "memory") 2)
  (data (i32.const 1024) "{\"name\":\"flaky\",\"version\":\"1.0.0\",\"abi\":1,\"schemes\":[\"flaky\"],\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 3072) "{\"code\":\"invalid_params\",\"message\":\"declared by the guest\"}\00")
  (data (i32.const 3584) "{\"content\":[],\"structuredContent\":\00")
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

  (func $echo (param $len i32) (result i32) (local $pl i32) (local $end i32)
    (if (i32.gt_u (local.get $len) (i32.const 57000))
      (then (call $reply (i32.const 3072)) (return (i32.const 1))))
    (local.set $pl (call $strlen (i32.const 3584)))
    (memory.copy (i32.const 8192) (i32.const 3584) (local.get $pl))
    (memory.copy (i32.add (i32.const 8192) (local.get $pl)) (i32.const 65536) (local.get $len))
    (local.set $end (i32.add (i32.add (i32.const 8192) (local.get $pl)) (local.get $len)))
    (i32.store8 (local.get $end) (i32.const 125))
    (call $set_result (i32.const 8192) (i32.sub (i32.add (local.get $end) (i32.const 1)) (i32.const 8192)))
    (i32.const 0))

  (func (export "corral_call") (param $op i32) (param $len i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $reply (i32.const 1024)) (return (i32.const 0))))
    (if (i32.eq (local.get $op) (i32.const 5))
      (then (return (call $echo (local.get $len)))))
    (if (i32.eq (local.get $op) (i32.const 6))
      (then unreachable))
    (call $reply (i32.const 3072))
    (i32.const 1)))
