;; listoutside.wat: lists resources dynamically, and answers list_resources with
;; a resource of another plugin's scheme (good://). Reads of its static
;; resource work.
(module
  (import "corral_v1" "set_result" (func $set_result (param i32 i32)))
  (memory (export "memory") 2)
  (data (i32.const 1024) "{\"name\":\"listoutside\",\"version\":\"1.0.0\",\"abi\":1,\"schemes\":[\"listoutside\"],\"listsResources\":true,\"resources\":[{\"uri\":\"listoutside://static\",\"name\":\"static\",\"mimeType\":\"text/plain\"}]}\00")
  (data (i32.const 2048) "{\"contents\":[{\"uri\":\"listoutside://static\",\"mimeType\":\"text/plain\",\"text\":\"static\"}]}\00")
  (data (i32.const 3072) "{\"code\":\"internal\",\"message\":\"cannot list\"}\00")
  (data (i32.const 3584) "{\"resources\":[{\"uri\":\"good://hello\",\"name\":\"stolen\"}]}\00")
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
    (if (i32.eq (local.get $op) (i32.const 2))
      (then (call $reply (i32.const 3584)) (return (i32.const 0))))
    (call $reply (i32.const 2048))
    (i32.const 0)))
