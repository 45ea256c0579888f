//! Requests the host sends (ABI.md §7) and the results a handler returns.

use crate::base64;
use crate::json::Value;

/// Who a request is served for. `id` is opaque (possibly empty).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Principal {
    /// The principal's id.
    pub id: String,
    /// Its groups, if the host knows any.
    pub groups: Vec<String>,
}

/// What a retried request carries after an `input_required` answer
/// (ABI.md §7.7), and what the client declared it can answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Input {
    /// The client's declared capabilities (an object, or null).
    pub client_capabilities: Value,
    /// The client's answers, by the keys the handler chose.
    pub responses: Vec<(String, Value)>,
    /// The handler's own continuation, exactly as it returned it.
    pub state: Option<String>,
}

/// A client's answer to an elicitation.
#[derive(Clone, Debug, PartialEq)]
pub struct Elicited {
    /// `accept`, `decline` or `cancel`.
    pub action: String,
    /// The submitted form (an object), or null.
    pub content: Value,
}

impl Input {
    fn parse(v: &Value) -> Input {
        let mut input = Input {
            client_capabilities: v.get("clientCapabilities").cloned().unwrap_or(Value::Null),
            ..Input::default()
        };
        if let Some(m) = v.get("inputResponses").and_then(Value::as_object) {
            input.responses = m.to_vec();
        }
        input.state = v.get("state").and_then(Value::as_str).map(str::to_string);
        input
    }

    /// Whether the client declared capability `name` (`elicitation`,
    /// `sampling`, `roots`).
    pub fn has_capability(&self, name: &str) -> bool {
        matches!(self.client_capabilities.get(name), Some(Value::Object(_)))
    }

    /// The raw answer keyed `key`.
    pub fn response(&self, key: &str) -> Option<&Value> {
        self.responses.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The client's answer to the elicitation keyed `key`.
    pub fn elicitation(&self, key: &str) -> Option<Elicited> {
        let r = self.response(key)?;
        let action = r.get("action")?.as_str()?;
        if action.is_empty() {
            return None;
        }
        Some(Elicited { action: action.to_string(), content: r.get("content").cloned().unwrap_or(Value::Null) })
    }

    /// The text of the client's answer to the sampling request keyed `key`.
    pub fn sampled(&self, key: &str) -> Option<String> {
        Some(self.response(key)?.get("content")?.get("text")?.as_str()?.to_string())
    }

    /// The root URIs of the client's answer to the roots request keyed `key`.
    pub fn roots(&self, key: &str) -> Option<Vec<String>> {
        let roots = self.response(key)?.get("roots")?.as_array()?;
        Some(roots.iter().filter_map(|r| r.get("uri").and_then(Value::as_str)).map(str::to_string).collect())
    }
}

fn string(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

fn string_map(v: Option<&Value>) -> Vec<(String, String)> {
    let members = v.and_then(Value::as_object).unwrap_or(&[]);
    members.iter().filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string()))).collect()
}

fn lookup<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

fn principal(v: &Value) -> Principal {
    let p = v.get("principal");
    Principal {
        id: p.map(|p| string(p, "id")).unwrap_or_default(),
        groups: p
            .and_then(|p| p.get("groups"))
            .and_then(Value::as_array)
            .map(|g| g.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default(),
    }
}

/// A `list_resources` request (§7.2).
#[derive(Clone, Debug, PartialEq)]
pub struct ListRequest {
    /// "" for the first page, else a `next` cursor the plugin returned.
    pub cursor: String,
    /// The most resources the page may hold.
    pub limit: usize,
    /// Who asks.
    pub principal: Principal,
}

impl ListRequest {
    pub(crate) fn parse(v: &Value) -> ListRequest {
        let limit = v.get("limit").and_then(Value::as_i64).filter(|&n| n > 0).unwrap_or(100);
        ListRequest { cursor: string(v, "cursor"), limit: limit as usize, principal: principal(v) }
    }
}

/// A `read_resource` request (§7.3).
#[derive(Clone, Debug, PartialEq)]
pub struct ReadRequest {
    /// The URI to read.
    pub uri: String,
    /// The template the host matched the URI to, if any.
    pub template: Option<String>,
    /// The template's variables, decoded.
    pub variables: Vec<(String, String)>,
    /// Who asks.
    pub principal: Principal,
    /// Answers to an earlier input_required, and the client's capabilities.
    pub input: Input,
}

impl ReadRequest {
    pub(crate) fn parse(v: &Value) -> ReadRequest {
        ReadRequest {
            uri: string(v, "uri"),
            template: v.get("template").and_then(Value::as_str).map(str::to_string),
            variables: string_map(v.get("variables")),
            principal: principal(v),
            input: Input::parse(v),
        }
    }

    /// The value of template variable `name`.
    pub fn var(&self, name: &str) -> Option<&str> {
        lookup(&self.variables, name)
    }
}

/// A `get_prompt` request (§7.4).
#[derive(Clone, Debug, PartialEq)]
pub struct PromptRequest {
    /// The prompt's name.
    pub name: String,
    /// Its arguments.
    pub arguments: Vec<(String, String)>,
    /// Who asks.
    pub principal: Principal,
    /// Answers to an earlier input_required, and the client's capabilities.
    pub input: Input,
}

impl PromptRequest {
    pub(crate) fn parse(v: &Value) -> PromptRequest {
        PromptRequest {
            name: string(v, "name"),
            arguments: string_map(v.get("arguments")),
            principal: principal(v),
            input: Input::parse(v),
        }
    }

    /// The value of argument `name`.
    pub fn arg(&self, name: &str) -> Option<&str> {
        lookup(&self.arguments, name)
    }
}

/// A `call_tool` request (§7.5).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolRequest {
    /// The tool's name.
    pub name: String,
    /// The client's arguments: always an object (`{}` when absent).
    pub arguments: Value,
    /// Who asks.
    pub principal: Principal,
    /// Answers to an earlier input_required, and the client's capabilities.
    pub input: Input,
}

impl ToolRequest {
    pub(crate) fn parse(v: &Value) -> ToolRequest {
        ToolRequest {
            name: string(v, "name"),
            arguments: v.get("arguments").cloned().unwrap_or_else(Value::object),
            principal: principal(v),
            input: Input::parse(v),
        }
    }

    /// The argument `name`.
    pub fn arg(&self, name: &str) -> Option<&Value> {
        self.arguments.get(name)
    }
}

/// A `complete` request (§7.6).
#[derive(Clone, Debug, PartialEq)]
pub struct CompleteRequest {
    /// `ref/prompt` or `ref/resource`.
    pub ref_type: String,
    /// The prompt's name, or the template (`uriTemplate`) for a resource.
    pub ref_name: String,
    /// The argument or template variable being completed.
    pub argument: String,
    /// Its partial value.
    pub value: String,
    /// Values already chosen for other arguments.
    pub arguments: Vec<(String, String)>,
    /// Who asks.
    pub principal: Principal,
}

impl CompleteRequest {
    pub(crate) fn parse(v: &Value) -> CompleteRequest {
        let r = v.get("ref").cloned().unwrap_or(Value::Null);
        let ref_type = string(&r, "type");
        let ref_name = if ref_type == "ref/resource" { string(&r, "uri") } else { string(&r, "name") };
        let a = v.get("argument").cloned().unwrap_or(Value::Null);
        CompleteRequest {
            ref_type,
            ref_name,
            argument: string(&a, "name"),
            value: string(&a, "value"),
            arguments: string_map(v.get("arguments")),
            principal: principal(v),
        }
    }

    /// The value already chosen for argument `name`.
    pub fn chosen(&self, name: &str) -> Option<&str> {
        lookup(&self.arguments, name)
    }
}

/// One resource content: text or a blob (MCP TextResourceContents or
/// BlobResourceContents).
#[derive(Clone, Debug, PartialEq)]
pub struct Contents(pub(crate) Value);

impl Contents {
    /// Text content of `uri`.
    pub fn text(uri: &str, text: &str) -> Contents {
        Contents(Value::object().with("uri", uri).with("text", text))
    }

    /// Binary content of `uri`, sent as base64.
    pub fn blob(uri: &str, data: &[u8]) -> Contents {
        Contents(Value::object().with("uri", uri).with("blob", base64::encode(data)))
    }

    /// Sets the MIME type.
    pub fn mime(mut self, mime: &str) -> Contents {
        self.0.insert("mimeType", mime);
        self
    }

    /// The content as JSON.
    pub fn json(&self) -> &Value {
        &self.0
    }
}

/// The answer to a read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadResult {
    /// The contents (at least one).
    pub contents: Vec<Contents>,
    /// A caching hint in milliseconds.
    pub ttl_ms: Option<i64>,
}

impl ReadResult {
    /// A result of one content.
    pub fn of(c: Contents) -> ReadResult {
        ReadResult { contents: vec![c], ttl_ms: None }
    }

    /// A result of one text content with a MIME type.
    pub fn text(uri: &str, mime: &str, text: &str) -> ReadResult {
        ReadResult::of(Contents::text(uri, text).mime(mime))
    }

    /// Sets the caching hint.
    pub fn ttl(mut self, ms: i64) -> ReadResult {
        self.ttl_ms = Some(ms);
        self
    }

    pub(crate) fn to_json(&self) -> Value {
        let contents = self.contents.iter().map(|c| c.0.clone()).collect::<Vec<_>>();
        let mut v = Value::object().with("contents", contents);
        if let Some(ttl) = self.ttl_ms {
            v.insert("ttlMs", ttl);
        }
        v
    }
}

/// A prompt message (MCP PromptMessage).
#[derive(Clone, Debug, PartialEq)]
pub struct Message(pub(crate) Value);

impl Message {
    /// A text message from `role` (`user` or `assistant`).
    pub fn text(role: &str, text: &str) -> Message {
        Message(Value::object().with("role", role).with("content", Value::object().with("type", "text").with("text", text)))
    }

    /// A message embedding a resource's content.
    pub fn resource(role: &str, c: Contents) -> Message {
        Message(Value::object().with("role", role).with("content", Value::object().with("type", "resource").with("resource", c.0)))
    }

    /// A message with any MCP content block.
    pub fn content(role: &str, block: Value) -> Message {
        Message(Value::object().with("role", role).with("content", block))
    }
}

/// The answer to `get_prompt`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PromptResult {
    /// An optional description.
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<Message>,
}

impl PromptResult {
    /// A result of these messages.
    pub fn new(messages: Vec<Message>) -> PromptResult {
        PromptResult { description: None, messages }
    }

    /// Sets the description.
    pub fn description(mut self, d: &str) -> PromptResult {
        self.description = Some(d.to_string());
        self
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut v = Value::object();
        if let Some(d) = &self.description {
            v.insert("description", d.as_str());
        }
        v.with("messages", self.messages.iter().map(|m| m.0.clone()).collect::<Vec<_>>())
    }
}

/// The answer to `call_tool` (MCP CallToolResult).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolResult {
    /// Content blocks.
    pub content: Vec<Value>,
    /// Structured content (an object), if any.
    pub structured: Option<Value>,
    /// Whether the tool failed (the text explains why to the model).
    pub is_error: bool,
}

impl ToolResult {
    /// A result of one text block.
    pub fn text(text: &str) -> ToolResult {
        ToolResult { content: vec![Value::object().with("type", "text").with("text", text)], ..ToolResult::default() }
    }

    /// A failed tool run explained by `text`.
    pub fn error(text: &str) -> ToolResult {
        ToolResult { is_error: true, ..ToolResult::text(text) }
    }

    /// Sets the structured content.
    pub fn structured(mut self, v: Value) -> ToolResult {
        self.structured = Some(v);
        self
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut v = Value::object().with("content", self.content.clone());
        if let Some(s) = &self.structured {
            v.insert("structuredContent", s.clone());
        }
        if self.is_error {
            v.insert("isError", true);
        }
        v
    }
}

/// A resource in a listing or the manifest (MCP Resource).
#[derive(Clone, Debug, PartialEq)]
pub struct Resource(pub(crate) Value);

impl Resource {
    /// A resource at `uri` named `name`.
    pub fn new(uri: &str, name: &str) -> Resource {
        Resource(Value::object().with("uri", uri).with("name", name))
    }

    /// Sets the title.
    pub fn title(mut self, t: &str) -> Resource {
        self.0.insert("title", t);
        self
    }

    /// Sets the description.
    pub fn description(mut self, d: &str) -> Resource {
        self.0.insert("description", d);
        self
    }

    /// Sets the MIME type.
    pub fn mime(mut self, m: &str) -> Resource {
        self.0.insert("mimeType", m);
        self
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        self.0.get("uri").and_then(Value::as_str).unwrap_or("")
    }
}
