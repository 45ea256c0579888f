//! The Rust guest SDK for corral plugins: WebAssembly modules that serve MCP
//! resources, templates, prompts and tools through the corral host, written
//! against abi/ABI.md.
//!
//! A plugin is a `cdylib` crate. One function builds the [`Plugin`] and the
//! [`plugin!`] macro exports the ABI's functions (`corral_abi_v1`,
//! `corral_buffer`, `corral_call`) around it:
//!
//! ```
//! use corral::{Plugin, ReadResult, Resource};
//!
//! fn build() -> Plugin {
//!     let mut p = Plugin::new("hello", "1.0.0");
//!     p.scheme("hello");
//!     p.resource(Resource::new("hello://world", "world"), |req| {
//!         Ok(ReadResult::text(&req.uri, "text/plain", "hello, world"))
//!     });
//!     p
//! }
//!
//! corral::plugin!(build);
//! # fn main() {
//! #     let mut out = String::new();
//! #     assert_eq!(build().handle(3, br#"{"uri":"hello://world"}"#, &mut out), 0);
//! # }
//! ```
//!
//! Build it with Debian's toolchain (rustc 1.63 with the `wasm32-wasi`
//! standard library), offline:
//!
//! ```text
//! RUSTC=/usr/bin/rustc /usr/bin/cargo build --offline --release --target wasm32-wasi
//! ```
//!
//! The crate depends on nothing but `std`: it carries its own small JSON
//! reader and writer ([`json`]) and base64 ([`base64`]). Host capabilities
//! ([`log`], the `notify_*` functions, [`progress`], [`kv`], [`files`],
//! [`http`], [`config`]) are plain functions returning [`Errno`] on
//! failure. On a native target they are served by a per-thread
//! [`fake::FakeHost`], so a plugin's handlers can be tested with
//! `cargo test`; [`Plugin::handle`] runs one operation as the host would.
//!
//! A panic in a handler aborts the instance (a trap: the call fails and the
//! host replaces the instance), since wasm32-wasi has no unwinding; return
//! an [`Error`] instead.

#![warn(missing_docs)]

pub mod base64;
mod error;
#[cfg(not(target_arch = "wasm32"))]
pub mod fake;
mod host;
pub mod json;
mod plugin;
mod raw;
mod types;

pub use error::{Code, Error, InputRequired};
pub use host::{
    config, files, http, kv, log, notify_prompts_list_changed, notify_resource_updated, notify_resources_list_changed,
    notify_tools_list_changed, progress, Errno, FileInfo, Level,
};
pub use json::Value;
pub use plugin::{
    template_variables, Cap, Completion, Plugin, Prompt, TaskSupport, Template, Tool, ABI_MINOR, MAX_COMPLETIONS,
    STATUS_ERROR, STATUS_INPUT_REQUIRED, STATUS_OK,
};
pub use types::{
    CompleteRequest, Contents, Elicited, Input, ListRequest, Message, Principal, PromptRequest, PromptResult,
    ReadRequest, ReadResult, Resource, ToolRequest, ToolResult,
};

/// Exports the ABI's functions for the plugin built by `$build`, a
/// `fn() -> Plugin` called once per instance, on the first call. Use it
/// once, in the `cdylib` crate; on a native target it expands to nothing.
#[macro_export]
macro_rules! plugin {
    ($build:path) => {
        /// Reactor initialisation (ABI.md §3.2): runs the module's
        /// constructors once; the host calls it before anything else.
        #[cfg(all(target_arch = "wasm32", target_os = "wasi"))]
        #[no_mangle]
        pub extern "C" fn _initialize() {
            $crate::__rt::initialize()
        }

        /// ABI version marker: the minor this guest was built for.
        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn corral_abi_v1() -> i32 {
            $crate::ABI_MINOR
        }

        /// Returns the request buffer of at least `size` bytes.
        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn corral_buffer(size: usize) -> *mut u8 {
            $crate::__rt::buffer(size)
        }

        /// Handles one operation.
        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn corral_call(op: i32, len: usize) -> i32 {
            $crate::__rt::call(op, len, $build)
        }
    };
}

/// The state behind the exports of [`plugin!`]; not part of the API.
#[doc(hidden)]
#[cfg(target_arch = "wasm32")]
pub mod __rt {
    use crate::Plugin;
    use std::cell::UnsafeCell;

    struct State {
        plugin: Option<Plugin>,
        buf: Vec<u8>,
        out: String,
    }

    struct Global(UnsafeCell<State>);

    // A guest instance runs one call at a time on one thread (ABI.md §4),
    // and wasm32-wasi has no threads: the state is never shared.
    unsafe impl Sync for Global {}

    static STATE: Global = Global(UnsafeCell::new(State { plugin: None, buf: Vec::new(), out: String::new() }));

    fn state() -> &'static mut State {
        // Only the exports below reach the state, one at a time (see Sync).
        unsafe { &mut *STATE.0.get() }
    }

    #[cfg(target_os = "wasi")]
    extern "C" {
        // Defined by the linker: the module's static constructors.
        fn __wasm_call_ctors();
    }

    /// _initialize: what wasi-libc's reactor start file does. Exporting it
    /// makes the linker treat the module as a reactor; without it, Rust
    /// 1.63 links a cdylib as a command, whose every export is wrapped to
    /// run the C library's destructors after it returns.
    #[cfg(target_os = "wasi")]
    pub fn initialize() {
        // Called once per instance by the host, before any other export.
        unsafe { __wasm_call_ctors() }
    }

    /// corral_buffer: one buffer, replaced only when too small; 0 when
    /// memory runs out.
    pub fn buffer(size: usize) -> *mut u8 {
        let s = state();
        if s.buf.len() < size {
            s.buf = Vec::new();
            if s.buf.try_reserve_exact(size).is_err() {
                return std::ptr::null_mut();
            }
            s.buf.resize(size, 0);
        }
        s.buf.as_mut_ptr()
    }

    /// corral_call: runs the operation and hands the response to the host.
    pub fn call(op: i32, len: usize, build: fn() -> Plugin) -> i32 {
        let s = state();
        let plugin = s.plugin.get_or_insert_with(build);
        let status = if len > s.buf.len() {
            s.out.clear();
            s.out.push_str(r#"{"code":"internal","message":"request longer than the buffer"}"#);
            crate::STATUS_ERROR
        } else {
            plugin.handle(op, &s.buf[..len], &mut s.out)
        };
        crate::raw::set_result(s.out.as_bytes());
        status
    }
}
