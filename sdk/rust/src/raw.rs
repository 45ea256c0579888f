//! The host functions of import module `corral_v1` (ABI.md §8) as safe
//! functions over slices. On wasm32 they are the real imports; elsewhere
//! they are served by the thread's [`crate::fake::FakeHost`], so plugin
//! logic can be tested natively with `cargo test`.

#[cfg(target_arch = "wasm32")]
mod imports {
    #[link(wasm_import_module = "corral_v1")]
    extern "C" {
        pub fn set_result(ptr: *const u8, len: usize);
        pub fn take(ptr: *mut u8, len: usize) -> i32;
        pub fn log(level: i32, ptr: *const u8, len: usize) -> i32;
        pub fn notify(kind: i32, ptr: *const u8, len: usize) -> i32;
        pub fn progress(progress: f64, total: f64, ptr: *const u8, len: usize) -> i32;
        pub fn kv_get(kptr: *const u8, klen: usize) -> i32;
        pub fn kv_set(kptr: *const u8, klen: usize, vptr: *const u8, vlen: usize) -> i32;
        pub fn kv_delete(kptr: *const u8, klen: usize) -> i32;
        pub fn file_read(ptr: *const u8, len: usize) -> i32;
        pub fn file_stat(ptr: *const u8, len: usize) -> i32;
        pub fn file_list(ptr: *const u8, len: usize) -> i32;
        pub fn file_roots() -> i32;
        pub fn http_fetch(ptr: *const u8, len: usize) -> i32;
        pub fn config_get(ptr: *const u8, len: usize) -> i32;
    }
}

// Every slice passed below lies inside the guest's memory, which is all the
// host asks of a pointer/length pair (ABI.md §5); the host copies what it
// reads before it returns.

#[cfg(target_arch = "wasm32")]
pub(crate) fn set_result(b: &[u8]) {
    unsafe { imports::set_result(b.as_ptr(), b.len()) }
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn take(dst: &mut [u8]) -> i32 {
    unsafe { imports::take(dst.as_mut_ptr(), dst.len()) }
}

macro_rules! one_slice {
    ($($name:ident),*) => {$(
        #[cfg(target_arch = "wasm32")]
        pub(crate) fn $name(b: &[u8]) -> i32 {
            unsafe { imports::$name(b.as_ptr(), b.len()) }
        }
        #[cfg(not(target_arch = "wasm32"))]
        pub(crate) fn $name(b: &[u8]) -> i32 {
            crate::fake::with(|h| h.$name(b))
        }
    )*};
}

one_slice!(kv_get, kv_delete, file_read, file_stat, file_list, http_fetch, config_get);

#[cfg(target_arch = "wasm32")]
pub(crate) fn log(level: i32, msg: &[u8]) -> i32 {
    unsafe { imports::log(level, msg.as_ptr(), msg.len()) }
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn notify(kind: i32, payload: &[u8]) -> i32 {
    unsafe { imports::notify(kind, payload.as_ptr(), payload.len()) }
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn progress(progress: f64, total: f64, msg: &[u8]) -> i32 {
    unsafe { imports::progress(progress, total, msg.as_ptr(), msg.len()) }
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn kv_set(key: &[u8], val: &[u8]) -> i32 {
    unsafe { imports::kv_set(key.as_ptr(), key.len(), val.as_ptr(), val.len()) }
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn file_roots() -> i32 {
    unsafe { imports::file_roots() }
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn take(dst: &mut [u8]) -> i32 {
    crate::fake::with(|h| h.take(dst))
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn log(level: i32, msg: &[u8]) -> i32 {
    crate::fake::with(|h| h.log(level, msg))
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn notify(kind: i32, payload: &[u8]) -> i32 {
    crate::fake::with(|h| h.notify(kind, payload))
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn progress(progress: f64, total: f64, msg: &[u8]) -> i32 {
    crate::fake::with(|h| h.progress(progress, total, msg))
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn kv_set(key: &[u8], val: &[u8]) -> i32 {
    crate::fake::with(|h| h.kv_set(key, val))
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn file_roots() -> i32 {
    crate::fake::with(|h| h.file_roots())
}
