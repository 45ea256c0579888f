//! What a handler returns instead of a result: a guest error (ABI.md §10)
//! or a request for client input (`input_required`, §7.7).

use crate::host::Errno;
use crate::json::Value;
use std::fmt;

/// A guest error code (ABI.md §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// The resource, prompt or tool does not exist.
    NotFound,
    /// The request's arguments are wrong.
    InvalidParams,
    /// The plugin failed.
    Internal,
    /// A dependency is down; retry later.
    Unavailable,
}

impl Code {
    /// The code as the ABI spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::NotFound => "not_found",
            Code::InvalidParams => "invalid_params",
            Code::Internal => "internal",
            Code::Unavailable => "unavailable",
        }
    }
}

/// The failure of a handler.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// A guest error: the host maps `code` to a JSON-RPC error and passes
    /// the first 200 bytes of `message` to the client for `not_found` and
    /// `invalid_params`.
    Guest {
        /// The code.
        code: Code,
        /// One short sentence safe to show a client.
        message: String,
    },
    /// Ask the client for input first; only for reads, prompts and tools.
    InputRequired(InputRequired),
}

impl Error {
    /// The resource, prompt, tool or value does not exist.
    pub fn not_found(msg: impl Into<String>) -> Error {
        Error::Guest { code: Code::NotFound, message: msg.into() }
    }

    /// The request's arguments are wrong.
    pub fn invalid_params(msg: impl Into<String>) -> Error {
        Error::Guest { code: Code::InvalidParams, message: msg.into() }
    }

    /// The plugin failed.
    pub fn internal(msg: impl Into<String>) -> Error {
        Error::Guest { code: Code::Internal, message: msg.into() }
    }

    /// A dependency is down; the client may retry later.
    pub fn unavailable(msg: impl Into<String>) -> Error {
        Error::Guest { code: Code::Unavailable, message: msg.into() }
    }

    pub(crate) fn to_json(&self) -> Value {
        match self {
            Error::Guest { code, message } => Value::object().with("code", code.as_str()).with("message", message.as_str()),
            Error::InputRequired(ir) => ir.to_json(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Guest { code, message } => write!(f, "{}: {}", code.as_str(), message),
            Error::InputRequired(_) => f.write_str("input required"),
        }
    }
}

impl std::error::Error for Error {}

impl From<Errno> for Error {
    /// Maps a failed host function to the nearest guest error: a missing
    /// key or file is `not_found`, a malformed argument `invalid_params`, a
    /// transient failure `unavailable`, the rest `internal`.
    fn from(e: Errno) -> Error {
        let code = match e {
            Errno::NotFound => Code::NotFound,
            Errno::Invalid => Code::InvalidParams,
            Errno::Io | Errno::Timeout | Errno::RateLimited => Code::Unavailable,
            _ => Code::Internal,
        };
        Error::Guest { code, message: e.to_string() }
    }
}

impl From<InputRequired> for Error {
    fn from(ir: InputRequired) -> Error {
        Error::InputRequired(ir)
    }
}

/// Input requests for the client, keyed by names the handler chooses, and
/// the handler's continuation (`state`, sealed by the host and handed back
/// in the retried request's [`crate::Input::state`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InputRequired {
    requests: Vec<(String, Value)>,
    state: Option<String>,
}

impl InputRequired {
    /// No requests yet.
    pub fn new() -> InputRequired {
        InputRequired::default()
    }

    /// Adds a form elicitation: `message`, and a JSON Schema object (type
    /// "object" with properties) describing the answer.
    pub fn elicit(self, key: &str, message: &str, schema: Value) -> InputRequired {
        let params = Value::object().with("mode", "form").with("message", message).with("requestedSchema", schema);
        self.request(key, "elicitation/create", params)
    }

    /// Adds a sampling request of one user text message.
    pub fn sample(self, key: &str, text: &str, max_tokens: u32) -> InputRequired {
        let content = Value::object().with("type", "text").with("text", text);
        let msg = Value::object().with("role", "user").with("content", content);
        let params = Value::object().with("messages", vec![msg]).with("maxTokens", max_tokens);
        self.request(key, "sampling/createMessage", params)
    }

    /// Adds a roots/list request.
    pub fn list_roots(self, key: &str) -> InputRequired {
        self.request(key, "roots/list", Value::object())
    }

    /// Adds a request of any method with its params.
    pub fn request(mut self, key: &str, method: &str, params: Value) -> InputRequired {
        self.requests.push((key.to_string(), Value::object().with("method", method).with("params", params)));
        self
    }

    /// Sets the continuation handed back on the retry.
    pub fn state(mut self, state: &str) -> InputRequired {
        self.state = Some(state.to_string());
        self
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut v = Value::object();
        if !self.requests.is_empty() {
            v.insert("inputRequests", Value::Object(self.requests.clone()));
        }
        if let Some(s) = &self.state {
            v.insert("state", s.as_str());
        }
        v
    }
}
