;; good.wat: a small well-behaved corral guest (ABI 1.2, using nothing newer than 1.0) with no runtime.
;;
;; Memory layout (2 pages):
;;   1024  manifest (NUL-terminated JSON)
;;   2048  read_resource response
;;   3072  not_found error
;;   3584  echo prefix
;;   8192  echo output area (up to 57,344 bytes)
;;   65536 request buffer (65,536 bytes; corral_buffer refuses more)
;;
;; Operations: describe; read_resource answers a canned text resource;
;; call_tool echoes its request as structuredContent; anything else is a
;; not_found error.
(module
  (import "corral_v1" "set_result" (func $set_result (param i32 i32)))
  (memory (export "memory") 2)

  (data (i32.const 1024) "{\"name\":\"good\",\"version\":\"1.0.0\",\"abi\":1,\"title\":\"Good\",\"schemes\":[\"good\"],\"resources\":[{\"uri\":\"good://hello\",\"name\":\"hello\",\"mimeType\":\"text/plain\"}],\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 2048) "{\"contents\":[{\"uri\":\"good://hello\",\"mimeType\":\"text/plain\",\"text\":\"hello from wat\"}]}\00")
  (data (i32.const 3072) "{\"code\":\"not_found\",\"message\":\"no such operation\"}\00")
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

  ;; echo writes prefix + request + "}" to the output area.
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
    (if (i32.eq (local.get $op) (i32.const 3))
      (then (call $reply (i32.const 2048)) (return (i32.const 0))))
    (if (i32.eq (local.get $op) (i32.const 5))
      (then (return (call $echo (local.get $len)))))
    (call $reply (i32.const 3072))
    (i32.const 1)))
