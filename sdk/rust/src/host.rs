//! The host capabilities (ABI.md §8, §11): log, notify, progress, kv, files,
//! http and config. Each works only when the plugin requested the
//! capability and the operator granted it; otherwise it fails with
//! [`Errno::Denied`].

use crate::json::Value;
use crate::raw;
use std::fmt;

/// The failure of a host function: the ABI's errno (§10), or output of the
/// host that did not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Errno {
    /// -1: the capability is not granted, or the path, host or URI is
    /// outside the grant.
    Denied,
    /// -2: no such key, file or config value.
    NotFound,
    /// -3: a malformed argument.
    Invalid,
    /// -4: the kv quota would be exceeded.
    Quota,
    /// -5: input or output over a limit.
    TooLarge,
    /// -6: an I/O or network failure.
    Io,
    /// -7: too many calls; the action was dropped.
    RateLimited,
    /// -8: the operation took too long.
    Timeout,
    /// A negative value this SDK does not know (a newer minor's errno).
    Other(i32),
    /// The host's output was not the JSON the function promises.
    BadOutput,
}

impl Errno {
    /// The errno of a negative host function result.
    pub fn from_code(code: i32) -> Errno {
        match code {
            -1 => Errno::Denied,
            -2 => Errno::NotFound,
            -3 => Errno::Invalid,
            -4 => Errno::Quota,
            -5 => Errno::TooLarge,
            -6 => Errno::Io,
            -7 => Errno::RateLimited,
            -8 => Errno::Timeout,
            n => Errno::Other(n),
        }
    }

    /// The ABI's negative errno value; 0 for [`Errno::BadOutput`], which
    /// has none.
    pub fn code(self) -> i32 {
        match self {
            Errno::Denied => -1,
            Errno::NotFound => -2,
            Errno::Invalid => -3,
            Errno::Quota => -4,
            Errno::TooLarge => -5,
            Errno::Io => -6,
            Errno::RateLimited => -7,
            Errno::Timeout => -8,
            Errno::Other(n) => n,
            Errno::BadOutput => 0,
        }
    }

    fn text(self) -> &'static str {
        match self {
            Errno::Denied => "permission denied",
            Errno::NotFound => "not found",
            Errno::Invalid => "invalid argument",
            Errno::Quota => "quota exceeded",
            Errno::TooLarge => "too large",
            Errno::Io => "i/o error",
            Errno::RateLimited => "rate limited",
            Errno::Timeout => "timeout",
            Errno::Other(_) => "host error",
            Errno::BadOutput => "malformed host output",
        }
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Errno::Other(n) => write!(f, "host error {}", n),
            e => f.write_str(e.text()),
        }
    }
}

impl std::error::Error for Errno {}

fn status(r: i32) -> Result<(), Errno> {
    if r < 0 {
        Err(Errno::from_code(r))
    } else {
        Ok(())
    }
}

/// Fetches the `n` pending output bytes with `take` (ABI.md §9), or turns a
/// negative `n` into its errno.
fn output(n: i32) -> Result<Vec<u8>, Errno> {
    if n < 0 {
        return Err(Errno::from_code(n));
    }
    let mut buf = vec![0u8; n as usize];
    if n > 0 {
        let got = raw::take(&mut buf);
        if got < 0 {
            return Err(Errno::from_code(got));
        }
        buf.truncate(got as usize);
    }
    Ok(buf)
}

fn json_output(n: i32) -> Result<Value, Errno> {
    Value::parse_bytes(&output(n)?).map_err(|_| Errno::BadOutput)
}

/// A log level (ABI.md §8 `log`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// 0.
    Debug = 0,
    /// 1.
    Info = 1,
    /// 2.
    Warn = 2,
    /// 3.
    Error = 3,
}

/// Writes `msg` to the operator's log (the `log` capability). During a call
/// it also reaches the client being served, as `notifications/message`,
/// when that request asked for messages at this level.
pub fn log(level: Level, msg: &str) -> Result<(), Errno> {
    status(raw::log(level as i32, msg.as_bytes()))
}

/// Tells subscribed clients that the resource at `uri` (in one of the
/// plugin's schemes) changed (the `notify` capability).
pub fn notify_resource_updated(uri: &str) -> Result<(), Errno> {
    status(raw::notify(1, uri.as_bytes()))
}

/// Tells clients the plugin's resource list changed (`notify`).
pub fn notify_resources_list_changed() -> Result<(), Errno> {
    status(raw::notify(2, b""))
}

/// Tells clients the prompt list changed (`notify`).
pub fn notify_prompts_list_changed() -> Result<(), Errno> {
    status(raw::notify(3, b""))
}

/// Tells clients the tool list changed (`notify`).
pub fn notify_tools_list_changed() -> Result<(), Errno> {
    status(raw::notify(4, b""))
}

/// Reports the progress of the current call to its client (ABI 1.1; no
/// capability needed). `total` is 0 when unknown; `msg` may be empty. Each
/// report must be greater than the previous one.
pub fn progress(progress: f64, total: f64, msg: &str) -> Result<(), Errno> {
    status(raw::progress(progress, total, msg.as_bytes()))
}

/// The plugin's private key-value store (the `kv` capability): keys and
/// values are bytes, shared by all instances, durable across restarts.
pub mod kv {
    use super::{output, status, Errno};
    use crate::raw;

    /// The value of `key`; a missing key is [`Errno::NotFound`].
    pub fn get(key: &[u8]) -> Result<Vec<u8>, Errno> {
        output(raw::kv_get(key))
    }

    /// Stores `val` under `key`.
    pub fn set(key: &[u8], val: &[u8]) -> Result<(), Errno> {
        status(raw::kv_set(key, val))
    }

    /// Deletes `key`; deleting a missing key succeeds.
    pub fn delete(key: &[u8]) -> Result<(), Errno> {
        status(raw::kv_delete(key))
    }
}

/// A file or directory as the `files` capability describes it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileInfo {
    /// The cleaned absolute path.
    pub path: String,
    /// The last path element.
    pub name: String,
    /// The size in bytes (0 for a directory).
    pub size: i64,
    /// Whether it is a directory.
    pub dir: bool,
    /// The modification time, RFC 3339.
    pub mod_time: String,
}

impl FileInfo {
    fn from_json(v: &Value) -> Result<FileInfo, Errno> {
        if v.as_object().is_none() {
            return Err(Errno::BadOutput);
        }
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        Ok(FileInfo {
            path: s("path"),
            name: s("name"),
            size: v.get("size").and_then(Value::as_i64).unwrap_or(0),
            dir: v.get("dir").and_then(Value::as_bool).unwrap_or(false),
            mod_time: s("modTime"),
        })
    }
}

/// Read-only access to the directories the operator granted (the `files`
/// capability). Paths are absolute and slash-separated, as in a `file://`
/// URI.
pub mod files {
    use super::{json_output, output, Errno, FileInfo};
    use crate::raw;

    /// The whole content of the regular file at `path`.
    pub fn read(path: &str) -> Result<Vec<u8>, Errno> {
        output(raw::file_read(path.as_bytes()))
    }

    /// Describes the file or directory at `path`.
    pub fn stat(path: &str) -> Result<FileInfo, Errno> {
        FileInfo::from_json(&json_output(raw::file_stat(path.as_bytes()))?)
    }

    /// The entries of the directory at `path`, sorted by name.
    pub fn list(path: &str) -> Result<Vec<FileInfo>, Errno> {
        let v = json_output(raw::file_list(path.as_bytes()))?;
        v.as_array().ok_or(Errno::BadOutput)?.iter().map(FileInfo::from_json).collect()
    }

    /// The granted roots.
    pub fn roots() -> Result<Vec<String>, Errno> {
        let v = json_output(raw::file_roots())?;
        let a = v.as_array().ok_or(Errno::BadOutput)?;
        a.iter().map(|r| r.as_str().map(str::to_string).ok_or(Errno::BadOutput)).collect()
    }
}

/// Outbound HTTP to the hosts the operator granted (the `http` capability).
pub mod http {
    use super::{json_output, Errno};
    use crate::base64;
    use crate::json::Value;
    use crate::raw;

    /// An outbound request.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Request {
        /// `GET` (the default when empty) or `POST`.
        pub method: String,
        /// An absolute http or https URL.
        pub url: String,
        /// Request headers, in order.
        pub headers: Vec<(String, String)>,
        /// The body, sent with POST only.
        pub body: Vec<u8>,
    }

    /// The answer: any HTTP status is a successful fetch.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Response {
        /// The HTTP status code.
        pub status: u16,
        /// Response headers; repeated ones are joined with ", ".
        pub headers: Vec<(String, String)>,
        /// The body.
        pub body: Vec<u8>,
    }

    impl Response {
        /// The value of header `name` (compared ignoring ASCII case).
        pub fn header(&self, name: &str) -> Option<&str> {
            self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
        }
    }

    /// Performs `req`.
    pub fn fetch(req: &Request) -> Result<Response, Errno> {
        let mut headers = Value::object();
        for (k, v) in &req.headers {
            headers.insert(k, v.as_str());
        }
        let mut body = Value::object().with("method", req.method.as_str()).with("url", req.url.as_str());
        if !req.headers.is_empty() {
            body.insert("headers", headers);
        }
        if !req.body.is_empty() {
            body.insert("body", base64::encode(&req.body));
        }
        let v = json_output(raw::http_fetch(body.to_string().as_bytes()))?;
        let status = v.get("status").and_then(Value::as_i64).ok_or(Errno::BadOutput)?;
        let mut resp = Response { status: status as u16, ..Response::default() };
        if let Some(h) = v.get("headers").and_then(Value::as_object) {
            for (k, hv) in h {
                resp.headers.push((k.clone(), hv.as_str().ok_or(Errno::BadOutput)?.to_string()));
            }
        }
        if let Some(b) = v.get("body").and_then(Value::as_str) {
            resp.body = base64::decode(b).ok_or(Errno::BadOutput)?;
        }
        Ok(resp)
    }

    /// Fetches `url` with GET.
    pub fn get(url: &str) -> Result<Response, Errno> {
        fetch(&Request { method: "GET".into(), url: url.into(), ..Request::default() })
    }

    /// Sends `body` with POST as `content_type`.
    pub fn post(url: &str, content_type: &str, body: &[u8]) -> Result<Response, Errno> {
        fetch(&Request {
            method: "POST".into(),
            url: url.into(),
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.to_vec(),
        })
    }
}

/// The operator's settings for the plugin (the `config` capability).
pub mod config {
    use super::{output, Errno};
    use crate::raw;

    /// The value of `key`; an unset key is [`Errno::NotFound`].
    pub fn get(key: &str) -> Result<String, Errno> {
        String::from_utf8(output(raw::config_get(key.as_bytes()))?).map_err(|_| Errno::BadOutput)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::{self, FakeHost};

    #[test]
    fn denied_without_a_grant() {
        fake::install(FakeHost::new());
        assert_eq!(kv::get(b"k"), Err(Errno::Denied));
        assert_eq!(kv::set(b"k", b"v"), Err(Errno::Denied));
        assert_eq!(log(Level::Info, "x"), Err(Errno::Denied));
        assert_eq!(notify_resource_updated("t://x"), Err(Errno::Denied));
        assert_eq!(files::roots(), Err(Errno::Denied));
        assert_eq!(http::get("http://x/"), Err(Errno::Denied));
        assert_eq!(config::get("k"), Err(Errno::Denied));
        assert_eq!(progress(1.0, 0.0, ""), Ok(()), "progress needs no capability");
    }

    #[test]
    fn kv_round_trips_bytes() {
        fake::install(FakeHost::new().grant(&["kv"]));
        assert_eq!(kv::get(b"k"), Err(Errno::NotFound));
        kv::set(b"k", b"\x00\xffv").unwrap();
        assert_eq!(kv::get(b"k").unwrap(), b"\x00\xffv");
        kv::set(b"e", b"").unwrap();
        assert_eq!(kv::get(b"e").unwrap(), b"");
        kv::delete(b"k").unwrap();
        kv::delete(b"k").unwrap();
        assert_eq!(kv::get(b"k"), Err(Errno::NotFound));
        assert_eq!(kv::get(b""), Err(Errno::Invalid));
    }

    #[test]
    fn errnos_map_to_guest_errors() {
        let cases = [
            (-1, Errno::Denied, "internal"),
            (-2, Errno::NotFound, "not_found"),
            (-3, Errno::Invalid, "invalid_params"),
            (-4, Errno::Quota, "internal"),
            (-5, Errno::TooLarge, "internal"),
            (-6, Errno::Io, "unavailable"),
            (-7, Errno::RateLimited, "unavailable"),
            (-8, Errno::Timeout, "unavailable"),
            (-42, Errno::Other(-42), "internal"),
        ];
        for (code, errno, guest) in cases {
            assert_eq!(Errno::from_code(code), errno);
            assert_eq!(errno.code(), code);
            match crate::Error::from(errno) {
                crate::Error::Guest { code, .. } => assert_eq!(code.as_str(), guest, "{}", errno),
                e => panic!("{:?}", e),
            }
        }
    }

    #[test]
    fn http_encodes_the_request_and_decodes_the_answer() {
        let mut h = FakeHost::new().grant(&["http"]);
        h.http = Some(Box::new(|req| {
            let want = r#"{"method":"POST","url":"https://api.example/v1","headers":{"Content-Type":"application/json"},"body":"eyJxIjoxfQ=="}"#;
            if req.to_string() != want {
                return Err(-3);
            }
            Ok(Value::parse(r#"{"status":201,"headers":{"X-Id":"7"},"body":"b2s="}"#).unwrap())
        }));
        fake::install(h);
        let r = http::post("https://api.example/v1", "application/json", br#"{"q":1}"#).unwrap();
        assert_eq!((r.status, r.header("x-id"), r.body.as_slice()), (201, Some("7"), &b"ok"[..]));
        fake::with(|h| h.http = Some(Box::new(|_| Ok(Value::parse(r#"{"status":200,"body":"!"}"#).unwrap()))));
        assert_eq!(http::get("https://api.example/"), Err(Errno::BadOutput));
        fake::with(|h| h.http = Some(Box::new(|_| Err(-8))));
        assert_eq!(http::get("https://api.example/"), Err(Errno::Timeout));
    }

    #[test]
    fn files_stay_under_the_roots() {
        let mut h = FakeHost::new().grant(&["files"]);
        h.roots = vec!["/srv".into()];
        h.files.insert("/srv/a/x.md".into(), b"# x".to_vec());
        h.files.insert("/srv/a/sub/y".into(), b"y".to_vec());
        fake::install(h);
        assert_eq!(files::roots().unwrap(), vec!["/srv".to_string()]);
        assert_eq!(files::read("/srv/a/x.md").unwrap(), b"# x");
        assert_eq!(files::read("/etc/passwd"), Err(Errno::Denied));
        assert_eq!(files::read("/srv/../etc"), Err(Errno::Denied));
        assert_eq!(files::read("/srv/a/none"), Err(Errno::NotFound));
        let st = files::stat("/srv/a/x.md").unwrap();
        assert_eq!((st.name.as_str(), st.size, st.dir), ("x.md", 3, false));
        let list = files::list("/srv/a").unwrap();
        let names: Vec<(&str, bool)> = list.iter().map(|f| (f.name.as_str(), f.dir)).collect();
        assert_eq!(names, [("sub", true), ("x.md", false)]);
    }
}
