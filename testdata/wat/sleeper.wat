;; sleeper.wat: every operation but describe sleeps 150 ms (an hour when
;; the request starts with "h") through WASI poll_oneoff (one relative
;; monotonic-clock subscription), then answers
;; "woke up" with set_result and returns OK, with no loop or call between
;; the sleep and the answer where an interrupt check could stop it. Under
;; a 100 ms deadline every call must fail as a timeout.
(module
  (import "wasi_snapshot_preview1" "poll_oneoff"
    (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (import "corral_v1" "set_result" (func $set_result (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "{\"name\":\"sleeper\",\"version\":\"1.0.0\",\"abi\":1,\"schemes\":[\"sleeper\"]}")
  (data (i32.const 1152) "\"woke up\"")
  (func (export "corral_abi_v1") (result i32) (i32.const 4))
  (func (export "corral_buffer") (param i32) (result i32) (i32.const 8192))
  (func (export "corral_call") (param $op i32) (param $len i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then
        (call $set_result (i32.const 1024) (i32.const 66))
        (return (i32.const 0))))
    ;; subscription at 2048 (48 bytes): userdata 0, tag 0 (clock),
    ;; clock id 1 (monotonic), the timeout, precision 0, flags 0.
    (i64.store (i32.const 2048) (i64.const 0))
    (i32.store8 (i32.const 2056) (i32.const 0))
    (i32.store (i32.const 2064) (i32.const 1))
    (i64.store (i32.const 2072)
      (select (i64.const 3600000000000) (i64.const 150000000)
        (i32.and (i32.gt_u (local.get $len) (i32.const 0))
                 (i32.eq (i32.load8_u (i32.const 8192)) (i32.const 104)))))
    (i64.store (i32.const 2080) (i64.const 0))
    (i32.store16 (i32.const 2088) (i32.const 0))
    ;; one event at 3072, the count at 3200
    (drop (call $poll_oneoff (i32.const 2048) (i32.const 3072) (i32.const 1) (i32.const 3200)))
    (call $set_result (i32.const 1152) (i32.const 9))
    (i32.const 0)))
