//! A small JSON value type with a strict parser and a compact writer: what
//! the SDK needs to read requests and write responses without any crate.

use std::fmt;

/// A JSON value. Objects keep their members in order, as a list of pairs.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, kept as its JSON text (a valid JSON number literal), so
    /// that reading and writing one needs no floating-point conversion;
    /// [`Value::as_i64`] and [`Value::as_f64`] convert it.
    Number(String),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object: its members in order.
    Object(Vec<(String, Value)>),
}

/// The error of [`Value::parse`]: what was wrong and at which byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset into the input.
    pub offset: usize,
    /// What the parser expected or refused.
    pub message: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "json: {} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for ParseError {}

/// How deep arrays and objects may nest in parsed input.
const MAX_DEPTH: usize = 256;

impl Default for Value {
    /// `null`.
    fn default() -> Value {
        Value::Null
    }
}

impl Value {
    /// An empty object, to fill with [`Value::with`] or [`Value::insert`].
    pub fn object() -> Value {
        Value::Object(Vec::new())
    }

    /// Returns the object with `key` set to `v` (replacing an earlier
    /// member of that name). On a value that is not an object it does
    /// nothing.
    pub fn with(mut self, key: &str, v: impl Into<Value>) -> Value {
        self.insert(key, v);
        self
    }

    /// Sets `key` to `v` in an object, replacing an earlier member of that
    /// name. On a value that is not an object it does nothing.
    pub fn insert(&mut self, key: &str, v: impl Into<Value>) {
        if let Value::Object(members) = self {
            let v = v.into();
            match members.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = v,
                None => members.push((key.to_string(), v)),
            }
        }
    }

    /// The member `key` of an object; `None` for a missing member or a
    /// value that is not an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The number, if this is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => n.parse().ok(),
            _ => None,
        }
    }

    /// The number as an integer, if this is a number written without a
    /// fraction or exponent that fits an i64.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.parse().ok(),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The members, if this is an object.
    pub fn as_object(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Parses one JSON value from `text`, with nothing but whitespace after
    /// it.
    pub fn parse(text: &str) -> Result<Value, ParseError> {
        let mut p = Parser { b: text.as_bytes(), i: 0 };
        p.ws();
        let v = p.value(0)?;
        p.ws();
        if p.i != p.b.len() {
            return Err(p.err("unexpected data after the value"));
        }
        Ok(v)
    }

    /// Parses UTF-8 bytes as one JSON value; see [`Value::parse`].
    pub fn parse_bytes(b: &[u8]) -> Result<Value, ParseError> {
        match std::str::from_utf8(b) {
            Ok(s) => Value::parse(s),
            Err(e) => Err(ParseError { offset: e.valid_up_to(), message: "invalid UTF-8" }),
        }
    }

    /// Appends the compact JSON encoding of the value to `out`.
    pub fn write_to(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Number(n) => out.push_str(n),
            Value::String(s) => write_string(s, out),
            Value::Array(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_to(out);
                }
                out.push(']');
            }
            Value::Object(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(k, out);
                    out.push(':');
                    v.write_to(out);
                }
                out.push('}');
            }
        }
    }
}

impl fmt::Display for Value {
    /// Writes the compact JSON encoding.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.write_to(&mut s);
        f.write_str(&s)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::String(s.clone())
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<f64> for Value {
    /// A finite number; NaN and the infinities, which JSON cannot hold,
    /// become null.
    fn from(n: f64) -> Value {
        if n.is_finite() {
            Value::Number(n.to_string())
        } else {
            Value::Null
        }
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Number(n.to_string())
    }
}

impl From<i32> for Value {
    fn from(n: i32) -> Value {
        Value::Number(n.to_string())
    }
}

impl From<u32> for Value {
    fn from(n: u32) -> Value {
        Value::Number(n.to_string())
    }
}

impl From<usize> for Value {
    fn from(n: usize) -> Value {
        Value::Number(n.to_string())
    }
}

impl From<Vec<Value>> for Value {
    fn from(a: Vec<Value>) -> Value {
        Value::Array(a)
    }
}

impl From<Vec<String>> for Value {
    fn from(a: Vec<String>) -> Value {
        Value::Array(a.into_iter().map(Value::String).collect())
    }
}

impl From<&[&str]> for Value {
    fn from(a: &[&str]) -> Value {
        Value::Array(a.iter().map(|s| Value::from(*s)).collect())
    }
}

/// Appends `s` as a JSON string: quotes, backslashes and control
/// characters escaped, everything else as UTF-8.
pub fn write_string(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            out.push_str("\\u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// `s` as a JSON string, for messages that quote a name.
pub(crate) fn q<S: AsRef<str> + ?Sized>(s: &S) -> String {
    let mut out = String::new();
    write_string(s.as_ref(), &mut out);
    out
}

/// A list of names as a JSON array, for messages.
pub(crate) fn q_list(list: &[String]) -> String {
    Value::from(list.to_vec()).to_string()
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, message: &'static str) -> ParseError {
        ParseError { offset: self.i, message }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn lit(&mut self, word: &str, v: Value) -> Result<Value, ParseError> {
        if self.b[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err("invalid literal"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        match self.b.get(self.i) {
            None => Err(self.err("unexpected end of input")),
            Some(b'n') => self.lit("null", Value::Null),
            Some(b't') => self.lit("true", Value::Bool(true)),
            Some(b'f') => self.lit("false", Value::Bool(false)),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b'[') => {
                self.i += 1;
                let mut a = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Value::Array(a));
                }
                loop {
                    self.ws();
                    a.push(self.value(depth + 1)?);
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Value::Array(a));
                        }
                        _ => return Err(self.err("expected , or ]")),
                    }
                }
            }
            Some(b'{') => {
                self.i += 1;
                let mut m: Vec<(String, Value)> = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Value::Object(m));
                }
                loop {
                    self.ws();
                    if self.b.get(self.i) != Some(&b'"') {
                        return Err(self.err("expected a member name"));
                    }
                    let k = self.string()?;
                    self.ws();
                    if self.b.get(self.i) != Some(&b':') {
                        return Err(self.err("expected :"));
                    }
                    self.i += 1;
                    self.ws();
                    let v = self.value(depth + 1)?;
                    if m.iter().any(|(have, _)| *have == k) {
                        return Err(self.err("member name repeated"));
                    }
                    m.push((k, v));
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Value::Object(m));
                        }
                        _ => return Err(self.err("expected , or }")),
                    }
                }
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("unexpected character")),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.b.get(self.i) {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.i;
        if self.b[self.i] == b'-' {
            self.i += 1;
        }
        let int_start = self.i;
        if self.digits() == 0 {
            return Err(self.err("invalid number"));
        }
        if self.b[int_start] == b'0' && self.i - int_start > 1 {
            return Err(ParseError { offset: int_start, message: "leading zero in number" });
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.i) {
            self.i += 1;
            if let Some(b'+' | b'-') = self.b.get(self.i) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        // The bytes checked above are ASCII, so this slice is valid UTF-8.
        let text = std::str::from_utf8(&self.b[start..self.i]).map_err(|_| self.err("invalid number"))?;
        Ok(Value::Number(text.to_string()))
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.b.get(self.i) {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.err("invalid \\u escape")),
            };
            v = v * 16 + d as u32;
            self.i += 1;
        }
        Ok(v)
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.i += 1; // the opening quote
        let mut s = String::new();
        let mut start = self.i;
        loop {
            match self.b.get(self.i) {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    s.push_str(self.slice(start)?);
                    self.i += 1;
                    return Ok(s);
                }
                Some(b'\\') => {
                    s.push_str(self.slice(start)?);
                    self.i += 1;
                    let c = match self.b.get(self.i) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.i += 1;
                            let hi = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&hi) {
                                if !self.b[self.i..].starts_with(b"\\u") {
                                    return Err(self.err("lone surrogate"));
                                }
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return Err(self.err("lone surrogate"));
                                }
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else {
                                hi
                            };
                            let c = char::from_u32(code).ok_or_else(|| self.err("lone surrogate"))?;
                            s.push(c);
                            start = self.i;
                            continue;
                        }
                        _ => return Err(self.err("invalid escape")),
                    };
                    s.push(c);
                    self.i += 1;
                    start = self.i;
                }
                Some(0..=0x1f) => return Err(self.err("control character in string")),
                Some(_) => self.i += 1,
            }
        }
    }

    fn slice(&self, start: usize) -> Result<&'a str, ParseError> {
        std::str::from_utf8(&self.b[start..self.i]).map_err(|_| self.err("invalid UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let cases = [
            (r#"{"a":1,"b":[true,false,null],"c":"x\"y\\z\n"}"#, r#"{"a":1,"b":[true,false,null],"c":"x\"y\\z\n"}"#),
            (" [ 1.5 , -2 , 3e2 ] ", "[1.5,-2,3e2]"),
            (r#""\u00e9\ud83d\ude00\u0001""#, "\"é😀\\u0001\""),
            (r#"{}"#, "{}"),
            (r#"[]"#, "[]"),
            (r#""\/""#, r#""/""#),
        ];
        for (input, want) in cases {
            let v = Value::parse(input).unwrap_or_else(|e| panic!("{}: {}", input, e));
            assert_eq!(v.to_string(), want, "input {}", input);
        }
    }

    #[test]
    fn refuses_malformed_input() {
        let cases = [
            ("", "unexpected end of input"),
            ("{", "expected a member name"),
            (r#"{"a":1,"a":2}"#, "member name repeated"),
            ("[1,]", "unexpected character"),
            ("01", "leading zero in number"),
            ("1.", "invalid number"),
            ("\"\u{1}\"", "control character in string"),
            (r#""\ud800""#, "lone surrogate"),
            (r#""\x""#, "invalid escape"),
            ("tru", "invalid literal"),
            ("1 2", "unexpected data after the value"),
            ("\"abc", "unterminated string"),
        ];
        for (input, want) in cases {
            match Value::parse(input) {
                Ok(v) => panic!("{:?} parsed as {}", input, v),
                Err(e) => assert_eq!(e.message, want, "input {:?}", input),
            }
        }
    }

    #[test]
    fn refuses_deep_nesting_and_bad_utf8() {
        let deep = "[".repeat(MAX_DEPTH + 2) + &"]".repeat(MAX_DEPTH + 2);
        assert_eq!(Value::parse(&deep).unwrap_err().message, "nested too deeply");
        assert_eq!(Value::parse_bytes(b"\"\xff\"").unwrap_err().message, "invalid UTF-8");
    }

    #[test]
    fn builds_objects() {
        let v = Value::object().with("b", 1).with("a", "x").with("b", 2);
        assert_eq!(v.to_string(), r#"{"b":2,"a":"x"}"#);
        assert_eq!(v.get("a").and_then(Value::as_str), Some("x"));
        assert_eq!(v.get("b").and_then(Value::as_i64), Some(2));
        assert!(v.get("c").is_none());
        assert_eq!(Value::from(f64::NAN).to_string(), "null");
        assert_eq!(Value::from(0.25).to_string(), "0.25");
        assert_eq!(Value::from(-3).to_string(), "-3");
        let n = Value::parse("-1.5e3").unwrap();
        assert_eq!((n.as_f64(), n.as_i64(), n.to_string().as_str()), (Some(-1500.0), None, "-1.5e3"));
        let big = Value::parse("12345678901234567890").unwrap();
        assert_eq!((big.as_i64(), big.to_string().as_str()), (None, "12345678901234567890"));
    }
}
