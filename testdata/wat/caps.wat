;; caps.wat: requests every capability and exposes the host functions to
;; tests through call_tool. The request is not JSON but a selector byte
;; followed by an argument:
;;   r<path> file_read   s<path> file_stat   l<path> file_list   R file_roots
;;   h<json> http_fetch  g<key> kv_get       k<key>=<value> kv_set
;;   d<key> kv_delete    c<key> config_get   L<msg> log (info)
;;   n<uri> notify resource updated          m notify resources list changed
;;   X file_read with a pointer outside memory (must trap)
;;   T take into a range outside memory (must trap)
;; The response is {"n":<return value>,"out":<pending output or null>}; the
;; output is embedded as is, so tests use JSON-valued files and values.
;;
;; Memory (8 pages): 65536 request buffer, 131072 take area (up to 128 KiB),
;; 262144 response.
(module
  (import "corral_v1" "set_result" (func $set_result (param i32 i32)))
  (import "corral_v1" "take" (func $take (param i32 i32) (result i32)))
  (import "corral_v1" "log" (func $log (param i32 i32 i32) (result i32)))
  (import "corral_v1" "notify" (func $notify (param i32 i32 i32) (result i32)))
  (import "corral_v1" "kv_get" (func $kv_get (param i32 i32) (result i32)))
  (import "corral_v1" "kv_set" (func $kv_set (param i32 i32 i32 i32) (result i32)))
  (import "corral_v1" "kv_delete" (func $kv_delete (param i32 i32) (result i32)))
  (import "corral_v1" "file_read" (func $file_read (param i32 i32) (result i32)))
  (import "corral_v1" "file_stat" (func $file_stat (param i32 i32) (result i32)))
  (import "corral_v1" "file_list" (func $file_list (param i32 i32) (result i32)))
  (import "corral_v1" "file_roots" (func $file_roots (result i32)))
  (import "corral_v1" "http_fetch" (func $http_fetch (param i32 i32) (result i32)))
  (import "corral_v1" "config_get" (func $config_get (param i32 i32) (result i32)))
  (memory (export "memory") 8)
  (data (i32.const 1024) "{\"name\":\"caps\",\"version\":\"1.0.0\",\"abi\":1,\"schemes\":[\"caps\"],\"capabilities\":[\"log\",\"notify\",\"kv\",\"files\",\"http\",\"config\"]}\00")
  (data (i32.const 2048) "{\"n\":\00")
  (data (i32.const 2064) ",\"out\":\00")
  (data (i32.const 2080) "null\00")
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

  ;; keylen returns the offset of "=" in [$p, $p+$n), or $n.
  (func $keylen (param $p i32) (param $n i32) (result i32) (local $i i32)
    (block $done (loop $scan
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (br_if $done (i32.eq (i32.load8_u (i32.add (local.get $p) (local.get $i))) (i32.const 61)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $scan)))
    (local.get $i))

  (func $dispatch (param $sel i32) (param $a i32) (param $n i32) (result i32) (local $k i32)
    (if (i32.eq (local.get $sel) (i32.const 114)) (then (return (call $file_read (local.get $a) (local.get $n)))))
    (if (i32.eq (local.get $sel) (i32.const 115)) (then (return (call $file_stat (local.get $a) (local.get $n)))))
    (if (i32.eq (local.get $sel) (i32.const 108)) (then (return (call $file_list (local.get $a) (local.get $n)))))
    (if (i32.eq (local.get $sel) (i32.const 82)) (then (return (call $file_roots))))
    (if (i32.eq (local.get $sel) (i32.const 104)) (then (return (call $http_fetch (local.get $a) (local.get $n)))))
    (if (i32.eq (local.get $sel) (i32.const 103)) (then (return (call $kv_get (local.get $a) (local.get $n)))))
    (if (i32.eq (local.get $sel) (i32.const 107))
      (then
        (local.set $k (call $keylen (local.get $a) (local.get $n)))
        (if (i32.ge_u (local.get $k) (local.get $n)) (then (return (i32.const -3))))
        (return (call $kv_set (local.get $a) (local.get $k)
          (i32.add (i32.add (local.get $a) (local.get $k)) (i32.const 1))
          (i32.sub (i32.sub (local.get $n) (local.get $k)) (i32.const 1))))))
    (if (i32.eq (local.get $sel) (i32.const 100)) (then (return (call $kv_delete (local.get $a) (local.get $n)))))
    (if (i32.eq (local.get $sel) (i32.const 99)) (then (return (call $config_get (local.get $a) (local.get $n)))))
    (if (i32.eq (local.get $sel) (i32.const 76)) (then (return (call $log (i32.const 1) (local.get $a) (local.get $n)))))
    (if (i32.eq (local.get $sel) (i32.const 110)) (then (return (call $notify (i32.const 1) (local.get $a) (local.get $n)))))
    (if (i32.eq (local.get $sel) (i32.const 109)) (then (return (call $notify (i32.const 2) (i32.const 0) (i32.const 0)))))
    (if (i32.eq (local.get $sel) (i32.const 88)) (then (return (call $file_read (i32.const 0xffff0000) (i32.const 16)))))
    (if (i32.eq (local.get $sel) (i32.const 84)) (then (return (call $take (i32.const 0xfffffff0) (i32.const 64)))))
    (i32.const -3))

  (func (export "corral_call") (param $op i32) (param $len i32) (result i32) (local $r i32) (local $end i32) (local $t i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $reply (i32.const 1024)) (return (i32.const 0))))
    (if (i32.eqz (local.get $len)) (then (local.set $len (i32.const 1)) (i32.store8 (i32.const 65536) (i32.const 0))))
    (local.set $r (call $dispatch (i32.load8_u (i32.const 65536)) (i32.const 65537) (i32.sub (local.get $len) (i32.const 1))))
    (local.set $end (call $puts (i32.const 2048) (i32.const 262144)))
    (local.set $end (call $itoa (local.get $r) (local.get $end)))
    (local.set $end (call $puts (i32.const 2064) (local.get $end)))
    (if (i32.and (i32.gt_s (local.get $r) (i32.const 0)) (i32.le_s (local.get $r) (i32.const 131072)))
      (then
        (local.set $t (call $take (i32.const 131072) (local.get $r)))
        (if (i32.ne (local.get $t) (local.get $r)) (then unreachable))
        (memory.copy (local.get $end) (i32.const 131072) (local.get $r))
        (local.set $end (i32.add (local.get $end) (local.get $r))))
      (else (local.set $end (call $puts (i32.const 2080) (local.get $end)))))
    (i32.store8 (local.get $end) (i32.const 125))
    (call $set_result (i32.const 262144) (i32.sub (i32.add (local.get $end) (i32.const 1)) (i32.const 262144)))
    (i32.const 0)))
