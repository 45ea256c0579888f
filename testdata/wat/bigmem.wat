;; bigmem.wat: a well-behaved guest whose memory starts at 300 pages
;; (18.75 MiB), above the default limit of 256: it loads only under a
;; plugin entry that allows more (plugin.bigmem.limits.memoryPages), which
;; must then apply from its first instantiation, before the host knows its
;; name. It describes itself and answers read_resource for bigmem://hello.
(module
  (import "corral_v1" "set_result" (func $set_result (param i32 i32)))
  (memory (export "memory") 300)
  (data (i32.const 1024) "{\"name\":\"bigmem\",\"version\":\"1.0.0\",\"abi\":1,\"schemes\":[\"bigmem\"],\"resources\":[{\"uri\":\"bigmem://hello\",\"name\":\"hello\"}]}\00")
  (data (i32.const 2048) "{\"contents\":[{\"uri\":\"bigmem://hello\",\"text\":\"big hello\"}]}\00")
  (data (i32.const 3072) "{\"code\":\"not_found\",\"message\":\"no such operation\"}\00")

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
    (if (i32.eq (local.get $op) (i32.const 3))
      (then (call $reply (i32.const 2048)) (return (i32.const 0))))
    (call $reply (i32.const 3072))
    (i32.const 1)))
