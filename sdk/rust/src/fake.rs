//! An in-memory stand-in for the host, serving the host functions when the
//! SDK is built for a native target, so that a plugin's handlers can be
//! unit tested with `cargo test`. Each test thread has its own FakeHost.

use crate::json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// Answers an HTTPRequest JSON object with an HTTPResponse JSON object, or
/// a negative errno.
pub type HttpHandler = Box<dyn Fn(&Value) -> Result<Value, i32>>;

/// The fake host: a capability is usable when granted with
/// [`FakeHost::grant`]; everything a plugin did is recorded for tests to
/// inspect through [`with`].
#[derive(Default)]
pub struct FakeHost {
    granted: Vec<&'static str>,
    /// The kv store.
    pub kv: BTreeMap<Vec<u8>, Vec<u8>>,
    /// Log lines as (level, message).
    pub logs: Vec<(i32, String)>,
    /// Notifications as (kind, payload).
    pub notifications: Vec<(i32, String)>,
    /// Progress reports as (progress, total, message).
    pub progress_reports: Vec<(f64, f64, String)>,
    /// Files by absolute path, served under `roots`.
    pub files: BTreeMap<String, Vec<u8>>,
    /// The granted file roots.
    pub roots: Vec<String>,
    /// Config values.
    pub config: BTreeMap<String, String>,
    /// The answer to http_fetch; without one it fails with ErrnoIO.
    pub http: Option<HttpHandler>,
    pending: Option<Vec<u8>>,
}

const DENIED: i32 = -1;
const NOT_FOUND: i32 = -2;
const INVALID: i32 = -3;
const TOO_LARGE: i32 = -5;
const IO: i32 = -6;

impl FakeHost {
    /// A host granting nothing.
    pub fn new() -> FakeHost {
        FakeHost::default()
    }

    /// Grants capabilities by name (`log`, `notify`, `kv`, `files`, `http`,
    /// `config`).
    pub fn grant(mut self, caps: &[&'static str]) -> FakeHost {
        self.granted.extend_from_slice(caps);
        self
    }

    fn has(&self, cap: &str) -> bool {
        self.granted.contains(&cap)
    }

    fn stage(&mut self, out: Vec<u8>) -> i32 {
        let n = out.len() as i32;
        self.pending = Some(out);
        n
    }

    pub(crate) fn take(&mut self, dst: &mut [u8]) -> i32 {
        match &self.pending {
            None => NOT_FOUND,
            Some(p) if p.len() > dst.len() => TOO_LARGE,
            Some(p) => {
                dst[..p.len()].copy_from_slice(p);
                let n = p.len() as i32;
                self.pending = None;
                n
            }
        }
    }

    pub(crate) fn log(&mut self, level: i32, msg: &[u8]) -> i32 {
        if !self.has("log") {
            return DENIED;
        }
        if !(0..=3).contains(&level) {
            return INVALID;
        }
        self.logs.push((level, String::from_utf8_lossy(msg).into_owned()));
        0
    }

    pub(crate) fn notify(&mut self, kind: i32, payload: &[u8]) -> i32 {
        if !self.has("notify") {
            return DENIED;
        }
        match (kind, payload.is_empty()) {
            (1, false) | (2..=4, true) => {
                self.notifications.push((kind, String::from_utf8_lossy(payload).into_owned()));
                0
            }
            _ => INVALID,
        }
    }

    pub(crate) fn progress(&mut self, progress: f64, total: f64, msg: &[u8]) -> i32 {
        let last = self.progress_reports.last().map(|r| r.0);
        if !progress.is_finite() || progress < 0.0 || last.map_or(false, |l| progress <= l) || !total.is_finite() || total < 0.0 {
            return INVALID;
        }
        self.progress_reports.push((progress, total, String::from_utf8_lossy(msg).into_owned()));
        0
    }

    pub(crate) fn kv_get(&mut self, key: &[u8]) -> i32 {
        if !self.has("kv") {
            return DENIED;
        }
        if key.is_empty() || key.len() > 1024 {
            return INVALID;
        }
        match self.kv.get(key).cloned() {
            Some(v) => self.stage(v),
            None => NOT_FOUND,
        }
    }

    pub(crate) fn kv_set(&mut self, key: &[u8], val: &[u8]) -> i32 {
        if !self.has("kv") {
            return DENIED;
        }
        if key.is_empty() || key.len() > 1024 {
            return INVALID;
        }
        self.kv.insert(key.to_vec(), val.to_vec());
        0
    }

    pub(crate) fn kv_delete(&mut self, key: &[u8]) -> i32 {
        if !self.has("kv") {
            return DENIED;
        }
        self.kv.remove(key);
        0
    }

    fn path<'a>(&self, p: &'a [u8]) -> Result<&'a str, i32> {
        if !self.has("files") {
            return Err(DENIED);
        }
        let p = std::str::from_utf8(p).map_err(|_| INVALID)?;
        if !p.starts_with('/') || p.split('/').any(|s| s == "..") {
            return Err(DENIED);
        }
        if !self.roots.iter().any(|r| p == r || p.starts_with(&format!("{}/", r.trim_end_matches('/')))) {
            return Err(DENIED);
        }
        Ok(p)
    }

    pub(crate) fn file_read(&mut self, p: &[u8]) -> i32 {
        match self.path(p) {
            Err(e) => e,
            Ok(p) => match self.files.get(p).cloned() {
                Some(b) => self.stage(b),
                None => NOT_FOUND,
            },
        }
    }

    fn info(&self, path: &str) -> Option<Value> {
        let name = path.rsplit('/').next().unwrap_or("");
        let base = Value::object().with("path", path).with("name", name).with("modTime", "2026-01-01T00:00:00Z");
        if let Some(b) = self.files.get(path) {
            return Some(base.with("size", b.len()));
        }
        let prefix = format!("{}/", path.trim_end_matches('/'));
        self.files.keys().any(|k| k.starts_with(&prefix)).then(|| base.with("dir", true))
    }

    pub(crate) fn file_stat(&mut self, p: &[u8]) -> i32 {
        match self.path(p) {
            Err(e) => e,
            Ok(p) => match self.info(p) {
                Some(v) => self.stage(v.to_string().into_bytes()),
                None => NOT_FOUND,
            },
        }
    }

    pub(crate) fn file_list(&mut self, p: &[u8]) -> i32 {
        let p = match self.path(p) {
            Err(e) => return e,
            Ok(p) => p,
        };
        let prefix = format!("{}/", p.trim_end_matches('/'));
        let mut names: Vec<&str> = self
            .files
            .keys()
            .filter_map(|k| k.strip_prefix(&prefix))
            .map(|rest| rest.split('/').next().unwrap_or(rest))
            .collect();
        if names.is_empty() {
            return if self.files.contains_key(p) { INVALID } else { NOT_FOUND };
        }
        names.dedup();
        let list: Vec<Value> = names.iter().filter_map(|n| self.info(&format!("{}{}", prefix, n))).collect();
        self.stage(Value::Array(list).to_string().into_bytes())
    }

    pub(crate) fn file_roots(&mut self) -> i32 {
        if !self.has("files") {
            return DENIED;
        }
        let roots = Value::from(self.roots.clone()).to_string();
        self.stage(roots.into_bytes())
    }

    pub(crate) fn http_fetch(&mut self, req: &[u8]) -> i32 {
        if !self.has("http") {
            return DENIED;
        }
        let req = match Value::parse_bytes(req) {
            Ok(v) => v,
            Err(_) => return INVALID,
        };
        let answer = match &self.http {
            Some(h) => h(&req),
            None => Err(IO),
        };
        match answer {
            Ok(v) => self.stage(v.to_string().into_bytes()),
            Err(e) => e,
        }
    }

    pub(crate) fn config_get(&mut self, key: &[u8]) -> i32 {
        if !self.has("config") {
            return DENIED;
        }
        if key.len() > 1024 {
            return TOO_LARGE;
        }
        match std::str::from_utf8(key).ok().and_then(|k| self.config.get(k)).cloned() {
            Some(v) => self.stage(v.into_bytes()),
            None => NOT_FOUND,
        }
    }
}

thread_local! {
    static HOST: RefCell<FakeHost> = RefCell::new(FakeHost::new());
}

/// Replaces this thread's fake host.
pub fn install(h: FakeHost) {
    HOST.with(|cell| *cell.borrow_mut() = h);
}

/// Runs `f` on this thread's fake host, to set it up or inspect what the
/// plugin did.
pub fn with<R>(f: impl FnOnce(&mut FakeHost) -> R) -> R {
    HOST.with(|cell| f(&mut cell.borrow_mut()))
}
