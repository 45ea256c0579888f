;; kvflood.wat: call_tool stores 10,000 distinct keys ("k0".."k9999"), each
;; with a 100-byte JSON string value, in one call and answers
;; {"stored":S,"refused":R}: how many kv_set calls the host accepted and how
;; many it refused. The host's kv quota must keep the store small; the
;; runtime must keep serving.
(module
  (import "corral_v1" "set_result" (func $set_result (param i32 i32)))
  (import "corral_v1" "kv_set" (func $kv_set (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (data (i32.const 1024) "{\"name\":\"kvflood\",\"version\":\"1.0.0\",\"abi\":1,\"schemes\":[\"kvflood\"],\"capabilities\":[\"kv\"]}\00")
  (data (i32.const 2064) "{\"stored\":\00")
  (data (i32.const 2080) ",\"refused\":\00")
  ;; the value: a JSON string of 98 x's (100 bytes)
  (data (i32.const 2200) "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"\00")
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
  ;; itoa writes the decimal form of $v at $p and returns the end.
  (func $itoa (param $v i32) (param $p i32) (result i32) (local $len i32) (local $i i32) (local $u i32)
    (if (i32.lt_s (local.get $v) (i32.const 0))
      (then
        (i32.store8 (local.get $p) (i32.const 45))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $v (i32.sub (i32.const 0) (local.get $v)))))
    (local.set $u (local.get $v))
    (local.set $len (i32.const 1))
    (block $d (loop $c
      (br_if $d (i32.lt_u (local.get $u) (i32.const 10)))
      (local.set $u (i32.div_u (local.get $u) (i32.const 10)))
      (local.set $len (i32.add (local.get $len) (i32.const 1)))
      (br $c)))
    (local.set $i (i32.add (local.get $p) (local.get $len)))
    (local.set $u (local.get $v))
    (loop $w
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (i32.store8 (local.get $i) (i32.add (i32.const 48) (i32.rem_u (local.get $u) (i32.const 10))))
      (local.set $u (i32.div_u (local.get $u) (i32.const 10)))
      (br_if $w (i32.ne (local.get $i) (local.get $p))))
    (i32.add (local.get $p) (local.get $len)))

  ;; puts copies the NUL-terminated string at $s to $p and returns the end.
  (func $puts (param $s i32) (param $p i32) (result i32) (local $n i32)
    (local.set $n (call $strlen (local.get $s)))
    (memory.copy (local.get $p) (local.get $s) (local.get $n))
    (i32.add (local.get $p) (local.get $n)))

  (func (export "corral_call") (param $op i32) (param $len i32) (result i32)
    (local $i i32) (local $ok i32) (local $no i32) (local $end i32) (local $kend i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $reply (i32.const 1024)) (return (i32.const 0))))
    (block $done (loop $again
      (br_if $done (i32.ge_u (local.get $i) (i32.const 10000)))
      ;; key "k<i>" at 3000
      (i32.store8 (i32.const 3000) (i32.const 107))
      (local.set $kend (call $itoa (local.get $i) (i32.const 3001)))
      (if (i32.eqz (call $kv_set (i32.const 3000) (i32.sub (local.get $kend) (i32.const 3000))
                                 (i32.const 2200) (call $strlen (i32.const 2200))))
        (then (local.set $ok (i32.add (local.get $ok) (i32.const 1))))
        (else (local.set $no (i32.add (local.get $no) (i32.const 1)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $again)))
    (local.set $end (call $puts (i32.const 2064) (i32.const 4096)))
    (local.set $end (call $itoa (local.get $ok) (local.get $end)))
    (local.set $end (call $puts (i32.const 2080) (local.get $end)))
    (local.set $end (call $itoa (local.get $no) (local.get $end)))
    (i32.store8 (local.get $end) (i32.const 125))
    (call $set_result (i32.const 4096) (i32.sub (i32.add (local.get $end) (i32.const 1)) (i32.const 4096)))
    (i32.const 0)))
