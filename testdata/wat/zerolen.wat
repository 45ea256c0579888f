;; zerolen.wat: passes length 0 with a pointer far outside memory to log,
;; notify (resources list changed) and take. ABI.md §5: a length of 0 is
;; always valid, whatever the pointer, so none of them may trap. Every
;; operation but describe answers the three return values as a JSON
;; array, e.g. [0,0,-2].
(module
  (import "corral_v1" "set_result" (func $set_result (param i32 i32)))
  (import "corral_v1" "log" (func $log (param i32 i32 i32) (result i32)))
  (import "corral_v1" "notify" (func $notify (param i32 i32 i32) (result i32)))
  (import "corral_v1" "take" (func $take (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "{\"name\":\"zerolen\",\"version\":\"1.0.0\",\"abi\":1,\"schemes\":[\"zerolen\"],\"capabilities\":[\"log\",\"notify\"]}")
  (global $out (mut i32) (i32.const 0))
  (func (export "corral_abi_v1") (result i32) (i32.const 4))
  (func (export "corral_buffer") (param i32) (result i32) (i32.const 8192))

  (func $byte (param $b i32)
    (i32.store8 (global.get $out) (local.get $b))
    (global.set $out (i32.add (global.get $out) (i32.const 1))))

  ;; $num writes a return value in -9..9 as decimal.
  (func $num (param $v i32)
    (if (i32.lt_s (local.get $v) (i32.const 0))
      (then
        (call $byte (i32.const 45))
        (local.set $v (i32.sub (i32.const 0) (local.get $v)))))
    (call $byte (i32.add (i32.const 48) (local.get $v))))

  (func (export "corral_call") (param $op i32) (param $len i32) (result i32)
    (local $a i32) (local $b i32) (local $c i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then
        (call $set_result (i32.const 1024) (i32.const 98))
        (return (i32.const 0))))
    (local.set $a (call $log (i32.const 1) (i32.const 0xfffffff0) (i32.const 0)))
    (local.set $b (call $notify (i32.const 2) (i32.const 0xfffffff0) (i32.const 0)))
    (local.set $c (call $take (i32.const 0xfffffff0) (i32.const 0)))
    (global.set $out (i32.const 4096))
    (call $byte (i32.const 91))
    (call $num (local.get $a))
    (call $byte (i32.const 44))
    (call $num (local.get $b))
    (call $byte (i32.const 44))
    (call $num (local.get $c))
    (call $byte (i32.const 93))
    (call $set_result (i32.const 4096) (i32.sub (global.get $out) (i32.const 4096)))
    (i32.const 0)))
