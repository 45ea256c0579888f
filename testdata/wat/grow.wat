;; grow.wat: grows its memory until the engine refuses (the host's page
;; limit). read_resource then does what Go's runtime does when out of
;; memory: writes "fatal error: out of memory" to stderr and traps.
;; call_tool instead reports how many pages it reached: {"pages":N}.
(module
  (import "corral_v1" "set_result" (func $set_result (param i32 i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (data (i32.const 1024) "{\"name\":\"grow\",\"version\":\"1.0.0\",\"abi\":1,\"schemes\":[\"grow\"]}\00")
  (data (i32.const 2048) "fatal error: out of memory\n\00")
  (data (i32.const 3072) "{\"pages\":\00")
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

  (func $growall (param $step i32)
    (block $full (loop $more
      (br_if $full (i32.eq (memory.grow (local.get $step)) (i32.const -1)))
      (br $more))))

  (func (export "corral_call") (param $op i32) (param $len i32) (result i32) (local $end i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $reply (i32.const 1024)) (return (i32.const 0))))
    (if (i32.eq (local.get $op) (i32.const 5))
      (then
        (call $growall (i32.const 1))
        (local.set $end (call $puts (i32.const 3072) (i32.const 4096)))
        (local.set $end (call $itoa (memory.size) (local.get $end)))
        (i32.store8 (local.get $end) (i32.const 125))
        (call $set_result (i32.const 4096) (i32.sub (i32.add (local.get $end) (i32.const 1)) (i32.const 4096)))
        (return (i32.const 0))))
    (call $growall (i32.const 16))
    ;; iovec at 512: {ptr 2048, len 27}; bytes written at 520.
    (i32.store (i32.const 512) (i32.const 2048))
    (i32.store (i32.const 516) (call $strlen (i32.const 2048)))
    (drop (call $fd_write (i32.const 2) (i32.const 512) (i32.const 1) (i32.const 520)))
    unreachable))
