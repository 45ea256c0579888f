//! Registration: what a plugin serves, checked once and encoded as its
//! manifest (ABI.md §7.1), and the dispatch of each operation to its
//! handler.

use crate::error::Error;
use crate::json::{q, q_list, Value};
use crate::types::*;

/// The ABI minor this SDK is written against (reported by `corral_abi_v1`).
pub const ABI_MINOR: i32 = 4;

/// The most values a completion answer holds (MCP's limit).
pub const MAX_COMPLETIONS: usize = 100;

/// Status `corral_call` returns (ABI.md §10).
pub const STATUS_OK: i32 = 0;
/// The response is a guest error object.
pub const STATUS_ERROR: i32 = 1;
/// The response asks the client for input (§7.7).
pub const STATUS_INPUT_REQUIRED: i32 = 2;

/// Whether a tool's calls run as MCP tasks for a client that supports
/// them (ABI 1.3, docs/tasks.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskSupport {
    /// Never a task (the default).
    Forbidden,
    /// A task for a client that supports tasks, a plain call otherwise.
    Optional,
    /// Only as a task: a client without tasks is refused.
    Required,
}

/// The longest task deadline a tool may declare: a day.
const MAX_TASK_DEADLINE_MS: u32 = 86_400_000;

/// A host capability a plugin may request (ABI.md §11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cap {
    /// `log`: [`crate::log`].
    Log,
    /// `notify`: [`crate::notify_resource_updated`] and the list-changed
    /// notifications.
    Notify,
    /// `kv`: [`crate::kv`].
    Kv,
    /// `files`: [`crate::files`].
    Files,
    /// `http`: [`crate::http`].
    Http,
    /// `config`: [`crate::config`].
    Config,
}

impl Cap {
    /// The capability's name in the manifest.
    pub fn as_str(self) -> &'static str {
        match self {
            Cap::Log => "log",
            Cap::Notify => "notify",
            Cap::Kv => "kv",
            Cap::Files => "files",
            Cap::Http => "http",
            Cap::Config => "config",
        }
    }
}

type ReadFn = Box<dyn Fn(&ReadRequest) -> Result<ReadResult, Error>>;
type ListFn = Box<dyn Fn(&ListRequest) -> Result<(Vec<Resource>, String), Error>>;
type PromptFn = Box<dyn Fn(&PromptRequest) -> Result<PromptResult, Error>>;
type ToolFn = Box<dyn Fn(&ToolRequest) -> Result<ToolResult, Error>>;
type CompleteFn = Box<dyn Fn(&CompleteRequest) -> Result<Vec<String>, Error>>;

/// A resource template (MCP ResourceTemplate, RFC 6570).
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    v: Value,
    complete: Option<Vec<String>>,
}

impl Template {
    /// A template such as `notes://{topic}/{page}` named `name`.
    pub fn new(uri_template: &str, name: &str) -> Template {
        Template { v: Value::object().with("uriTemplate", uri_template).with("name", name), complete: None }
    }

    /// Sets the title.
    pub fn title(mut self, t: &str) -> Template {
        self.v.insert("title", t);
        self
    }

    /// Sets the description.
    pub fn description(mut self, d: &str) -> Template {
        self.v.insert("description", d);
        self
    }

    /// Sets the MIME type of what it reads.
    pub fn mime(mut self, m: &str) -> Template {
        self.v.insert("mimeType", m);
        self
    }

    /// Names the variables the completion handler fills (by default, with
    /// a handler, all of them).
    pub fn complete(mut self, vars: &[&str]) -> Template {
        self.complete = Some(vars.iter().map(|s| s.to_string()).collect());
        self
    }

    fn uri_template(&self) -> &str {
        self.v.get("uriTemplate").and_then(Value::as_str).unwrap_or("")
    }
}

/// A prompt (MCP Prompt).
#[derive(Clone, Debug, PartialEq)]
pub struct Prompt {
    v: Value,
    args: Vec<(String, bool)>,
    complete: Option<Vec<String>>,
}

impl Prompt {
    /// A prompt named `name`.
    pub fn new(name: &str) -> Prompt {
        Prompt { v: Value::object().with("name", name), args: Vec::new(), complete: None }
    }

    /// Sets the title.
    pub fn title(mut self, t: &str) -> Prompt {
        self.v.insert("title", t);
        self
    }

    /// Sets the description.
    pub fn description(mut self, d: &str) -> Prompt {
        self.v.insert("description", d);
        self
    }

    /// Adds an argument; a required one is checked by the host and the SDK
    /// before the handler runs.
    pub fn argument(mut self, name: &str, description: &str, required: bool) -> Prompt {
        self.args.push((name.to_string(), required));
        let mut a = Value::object().with("name", name);
        if !description.is_empty() {
            a.insert("description", description);
        }
        if required {
            a.insert("required", true);
        }
        let mut list = match self.v.get("arguments") {
            Some(Value::Array(list)) => list.clone(),
            _ => Vec::new(),
        };
        list.push(a);
        self.v.insert("arguments", list);
        self
    }

    /// Names the arguments the completion handler fills (by default, with
    /// a handler, all of them).
    pub fn complete(mut self, args: &[&str]) -> Prompt {
        self.complete = Some(args.iter().map(|s| s.to_string()).collect());
        self
    }

    fn name(&self) -> &str {
        self.v.get("name").and_then(Value::as_str).unwrap_or("")
    }
}

/// A tool (MCP Tool).
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    v: Value,
    err: Option<String>,
}

impl Tool {
    /// A tool named `name` whose arguments follow `input_schema`, a JSON
    /// Schema object written as JSON text (`{"type":"object",...}`). Its
    /// top-level `required` list is enforced before the handler runs.
    pub fn new(name: &str, input_schema: &str) -> Tool {
        let mut t = Tool { v: Value::object().with("name", name), err: None };
        match Value::parse(input_schema) {
            Ok(s) if s.get("type").and_then(Value::as_str) == Some("object") => t.v.insert("inputSchema", s),
            Ok(_) => t.err = Some(format!("tool {}: input schema must have type \"object\"", q(&name))),
            Err(e) => t.err = Some(format!("tool {}: input schema: {}", q(&name), e)),
        }
        t
    }

    /// Sets the title.
    pub fn title(mut self, t: &str) -> Tool {
        self.v.insert("title", t);
        self
    }

    /// Sets the description.
    pub fn description(mut self, d: &str) -> Tool {
        self.v.insert("description", d);
        self
    }

    /// Sets MCP tool annotations (an object such as `{"readOnlyHint":true}`).
    pub fn annotations(mut self, a: Value) -> Tool {
        self.v.insert("annotations", a);
        self
    }

    /// Declares whether the tool's calls run as MCP tasks (ABI 1.3). The
    /// handler is the same either way.
    pub fn task_support(mut self, s: TaskSupport) -> Tool {
        let name = match s {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        };
        self.v.insert("execution", Value::object().with("taskSupport", name));
        self
    }

    /// Gathers input before the task (ABI 1.3): a call without answers runs
    /// as a plain call, and the retry with the answers becomes the task.
    pub fn input_first(mut self) -> Tool {
        self.v.insert("inputFirst", true);
        self
    }

    /// How long each run of the handler inside a task may take, in place
    /// of the call deadline (ABI 1.4; 1 ms to a day, bounded by the host's
    /// `tasks.deadline`).
    pub fn task_deadline_ms(mut self, ms: u32) -> Tool {
        self.v.insert("taskDeadlineMs", ms);
        self
    }

    /// The registration mistake in the tool's task fields, if any.
    fn task_mistake(&self) -> Option<String> {
        let tasks = matches!(
            self.v.get("execution").and_then(|e| e.get("taskSupport")).and_then(Value::as_str),
            Some("optional") | Some("required")
        );
        let deadline = self.v.get("taskDeadlineMs").and_then(Value::as_i64);
        if let Some(d) = deadline {
            if d < 1 || d > i64::from(MAX_TASK_DEADLINE_MS) {
                return Some(format!("tool {}: task deadline {} ms is not between 1 and {}", q(&self.name()), d, MAX_TASK_DEADLINE_MS));
            }
        }
        if !tasks && (deadline.is_some() || self.v.get("inputFirst").is_some()) {
            return Some(format!("tool {}: input_first and task_deadline_ms need task support optional or required", q(&self.name())));
        }
        None
    }

    fn name(&self) -> &str {
        self.v.get("name").and_then(Value::as_str).unwrap_or("")
    }

    fn required(&self) -> Vec<String> {
        let req = self.v.get("inputSchema").and_then(|s| s.get("required")).and_then(Value::as_array);
        req.unwrap_or(&[]).iter().filter_map(Value::as_str).map(str::to_string).collect()
    }
}

struct TemplateEntry {
    t: Template,
    read: ReadFn,
    complete: Option<CompleteFn>,
}

struct PromptEntry {
    p: Prompt,
    get: PromptFn,
    complete: Option<CompleteFn>,
}

struct ToolEntry {
    t: Tool,
    call: ToolFn,
}

/// Where a completion handler goes; returned by [`Plugin::template`] and
/// [`Plugin::prompt`].
pub struct Completion<'a>(&'a mut Option<CompleteFn>);

impl<'a> Completion<'a> {
    /// Sets the handler suggesting values for the argument being completed
    /// given its partial value. The SDK keeps the first 100 and sets
    /// `total` and `hasMore`.
    pub fn completion<F>(self, f: F)
    where
        F: Fn(&CompleteRequest) -> Result<Vec<String>, Error> + 'static,
    {
        *self.0 = Some(Box::new(f));
    }
}

/// What a plugin serves. Build it with [`Plugin::new`] and the registration
/// methods in the function named by [`crate::plugin!`]. Mistakes
/// (duplicates, URIs outside the schemes, bad names) are collected and
/// reported by [`Plugin::validate`]; a plugin with one answers every call,
/// `describe` included, with an internal error naming them, so it does not
/// load and `corral plugin check` prints why.
pub struct Plugin {
    name: String,
    version: String,
    title: Option<String>,
    description: Option<String>,
    schemes: Vec<String>,
    caps: Vec<Cap>,
    required: Vec<Cap>,
    resources: Vec<(Resource, ReadFn)>,
    templates: Vec<TemplateEntry>,
    prompts: Vec<PromptEntry>,
    tools: Vec<ToolEntry>,
    lister: Option<ListFn>,
    reader: Option<ReadFn>,
    errors: Vec<String>,
    manifest: Option<Result<String, String>>,
}

fn name_ok(s: &str, max: usize, first: fn(u8) -> bool, rest: fn(u8) -> bool) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && b.len() <= max && first(b[0]) && b[1..].iter().all(|&c| rest(c))
}

fn plugin_name_ok(s: &str) -> bool {
    let lower_digit = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    name_ok(s, 64, lower_digit, |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-')
}

fn item_name_ok(s: &str) -> bool {
    let ok = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-';
    name_ok(s, 128, ok, ok)
}

fn scheme_ok(s: &str) -> bool {
    name_ok(s, 64, |c| c.is_ascii_lowercase(), |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'+' || c == b'.' || c == b'-')
}

/// The variable names of an RFC 6570 URI template in order of appearance,
/// without operators and modifiers.
pub fn template_variables(tmpl: &str) -> Vec<String> {
    let mut vars: Vec<String> = Vec::new();
    let mut rest = tmpl;
    while let Some(open) = rest.find('{') {
        let end = match rest[open..].find('}') {
            Some(e) => open + e,
            None => break,
        };
        let expr = rest[open + 1..end].trim_start_matches(|c| "+#./;?&".contains(c));
        for v in expr.split(',') {
            let v = v.split(|c| c == ':' || c == '*').next().unwrap_or("");
            if !v.is_empty() && !vars.iter().any(|have| have == v) {
                vars.push(v.to_string());
            }
        }
        rest = &rest[end + 1..];
    }
    vars
}

impl Plugin {
    /// A plugin named `name` (`[a-z0-9][a-z0-9_-]{0,63}`) at `version`.
    pub fn new(name: &str, version: &str) -> Plugin {
        Plugin {
            name: name.to_string(),
            version: version.to_string(),
            title: None,
            description: None,
            schemes: Vec::new(),
            caps: Vec::new(),
            required: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            tools: Vec::new(),
            lister: None,
            reader: None,
            errors: Vec::new(),
            manifest: None,
        }
    }

    fn fail(&mut self, msg: String) {
        self.errors.push(msg);
    }

    /// Sets the human-readable title.
    pub fn title(&mut self, t: &str) -> &mut Plugin {
        self.title = Some(t.to_string());
        self
    }

    /// Sets the description.
    pub fn description(&mut self, d: &str) -> &mut Plugin {
        self.description = Some(d.to_string());
        self
    }

    /// Claims a URI scheme exclusively; every resource, template and
    /// content URI the plugin serves must use one of its schemes.
    pub fn scheme(&mut self, s: &str) -> &mut Plugin {
        let s = s.to_ascii_lowercase();
        if !scheme_ok(&s) {
            self.fail(format!("scheme {} is not a lowercase URI scheme of at most 64 characters", q(&s)));
        } else if self.schemes.contains(&s) {
            self.fail(format!("scheme {} claimed twice", q(&s)));
        } else {
            self.schemes.push(s);
        }
        self
    }

    /// Asks for capabilities; only those the operator also grants work, the
    /// others fail with [`crate::Errno::Denied`].
    pub fn request(&mut self, caps: &[Cap]) -> &mut Plugin {
        for c in caps {
            if !self.caps.contains(c) {
                self.caps.push(*c);
            }
        }
        self
    }

    /// Asks for capabilities the plugin cannot work without (ABI 1.2):
    /// `corral plugin check` fails when one is not granted.
    pub fn require(&mut self, caps: &[Cap]) -> &mut Plugin {
        self.request(caps);
        for c in caps {
            if !self.required.contains(c) {
                self.required.push(*c);
            }
        }
        self
    }

    /// Declares a static resource, listed by the host without calling the
    /// plugin, and the handler that reads it.
    pub fn resource<F>(&mut self, r: Resource, read: F) -> &mut Plugin
    where
        F: Fn(&ReadRequest) -> Result<ReadResult, Error> + 'static,
    {
        let uri = r.uri().to_string();
        if uri.is_empty() || r.0.get("name").and_then(Value::as_str).unwrap_or("").is_empty() {
            self.fail(format!("resource {} needs a uri and a name", q(&uri)));
        } else if self.resources.iter().any(|(have, _)| have.uri() == uri) {
            self.fail(format!("resource {} declared twice", q(&uri)));
        } else {
            self.resources.push((r, Box::new(read)));
        }
        self
    }

    /// Declares a resource template and the handler reading URIs the host
    /// matched to it; chain `.completion(f)` to complete its variables.
    pub fn template<F>(&mut self, t: Template, read: F) -> Completion<'_>
    where
        F: Fn(&ReadRequest) -> Result<ReadResult, Error> + 'static,
    {
        let ut = t.uri_template().to_string();
        if ut.is_empty() || t.v.get("name").and_then(Value::as_str).unwrap_or("").is_empty() {
            self.fail(format!("template {} needs a uriTemplate and a name", q(&ut)));
        } else if self.templates.iter().any(|e| e.t.uri_template() == ut) {
            self.fail(format!("template {} declared twice", q(&ut)));
        }
        self.templates.push(TemplateEntry { t, read: Box::new(read), complete: None });
        Completion(&mut self.templates.last_mut().unwrap().complete)
    }

    /// Declares a prompt and the handler rendering it; chain
    /// `.completion(f)` to complete its arguments.
    pub fn prompt<F>(&mut self, p: Prompt, get: F) -> Completion<'_>
    where
        F: Fn(&PromptRequest) -> Result<PromptResult, Error> + 'static,
    {
        if !item_name_ok(p.name()) {
            self.fail(format!("prompt name {} must match [A-Za-z0-9_.-]{{1,128}}", q(&p.name())));
        } else if self.prompts.iter().any(|e| e.p.name() == p.name()) {
            self.fail(format!("prompt {} declared twice", q(&p.name())));
        }
        let mut seen: Vec<&str> = Vec::new();
        for (a, _) in &p.args {
            if a.is_empty() || seen.contains(&a.as_str()) {
                self.errors.push(format!("prompt {}: argument names must be non-empty and unique", q(&p.name())));
            }
            seen.push(a);
        }
        self.prompts.push(PromptEntry { p, get: Box::new(get), complete: None });
        Completion(&mut self.prompts.last_mut().unwrap().complete)
    }

    /// Declares a tool and its handler. An `Err` from the handler becomes a
    /// tool result with `isError` and the error's message, as MCP asks for
    /// tool failures (except [`Error::InputRequired`]).
    pub fn tool<F>(&mut self, t: Tool, call: F) -> &mut Plugin
    where
        F: Fn(&ToolRequest) -> Result<ToolResult, Error> + 'static,
    {
        if let Some(e) = &t.err {
            self.errors.push(e.clone());
        } else if let Some(e) = t.task_mistake() {
            self.errors.push(e);
        } else if !item_name_ok(t.name()) {
            self.fail(format!("tool name {} must match [A-Za-z0-9_.-]{{1,128}}", q(&t.name())));
        } else if self.tools.iter().any(|e| e.t.name() == t.name()) {
            self.fail(format!("tool {} declared twice", q(&t.name())));
        } else {
            self.tools.push(ToolEntry { t, call: Box::new(call) });
        }
        self
    }

    /// Sets the handler listing dynamic resources page by page: at most
    /// `limit`, starting after `cursor`, and the next cursor ("" after the
    /// last page). Static resources are listed by the host already.
    pub fn lister<F>(&mut self, list: F) -> &mut Plugin
    where
        F: Fn(&ListRequest) -> Result<(Vec<Resource>, String), Error> + 'static,
    {
        self.lister = Some(Box::new(list));
        self
    }

    /// Sets the handler for URIs in the plugin's schemes that are neither a
    /// static resource nor matched to a template. Without one they are not
    /// found.
    pub fn reader<F>(&mut self, read: F) -> &mut Plugin
    where
        F: Fn(&ReadRequest) -> Result<ReadResult, Error> + 'static,
    {
        self.reader = Some(Box::new(read));
        self
    }

    fn owns(&self, uri: &str) -> bool {
        match uri.find(':') {
            Some(i) if i > 0 => self.schemes.iter().any(|s| s.eq_ignore_ascii_case(&uri[..i])),
            _ => false,
        }
    }

    /// Every registration mistake, one sentence each; empty when the
    /// plugin is well-formed.
    pub fn validate(&self) -> Vec<String> {
        let mut errs = self.errors.clone();
        if !plugin_name_ok(&self.name) {
            errs.push(format!("plugin name {} must match [a-z0-9][a-z0-9_-]{{0,63}}", q(&self.name)));
        }
        if self.version.is_empty() {
            errs.push("plugin version is empty".to_string());
        }
        for (r, _) in &self.resources {
            if !self.owns(r.uri()) {
                errs.push(format!("resource {} is outside the plugin's schemes {}", q(&r.uri()), q_list(&self.schemes)));
            }
        }
        for e in &self.templates {
            let ut = e.t.uri_template();
            if !self.owns(ut) {
                errs.push(format!("template {} is outside the plugin's schemes {}", q(&ut), q_list(&self.schemes)));
            }
            let vars = template_variables(ut);
            for c in e.t.complete.iter().flatten() {
                if !vars.contains(c) {
                    errs.push(format!("template {}: completable variable {} is not in the template", q(&ut), q(&c)));
                }
            }
            if e.complete.is_none() && e.t.complete.as_ref().map_or(false, |c| !c.is_empty()) {
                errs.push(format!("template {} declares completable variables but has no completion handler", q(&ut)));
            }
        }
        for e in &self.prompts {
            for c in e.p.complete.iter().flatten() {
                if !e.p.args.iter().any(|(a, _)| a == c) {
                    errs.push(format!("prompt {}: completable argument {} is not an argument", q(&e.p.name()), q(&c)));
                }
            }
            if e.complete.is_none() && e.p.complete.as_ref().map_or(false, |c| !c.is_empty()) {
                errs.push(format!("prompt {} declares completable arguments but has no completion handler", q(&e.p.name())));
            }
        }
        if (self.lister.is_some() || self.reader.is_some()) && self.schemes.is_empty() {
            errs.push("a lister or reader needs a scheme".to_string());
        }
        errs
    }

    fn template_can_fill(e: &TemplateEntry) -> Vec<String> {
        match (&e.t.complete, &e.complete) {
            (Some(c), _) => c.clone(),
            (None, Some(_)) => template_variables(e.t.uri_template()),
            (None, None) => Vec::new(),
        }
    }

    fn prompt_can_fill(e: &PromptEntry) -> Vec<String> {
        match (&e.p.complete, &e.complete) {
            (Some(c), _) => c.clone(),
            (None, Some(_)) => e.p.args.iter().map(|(a, _)| a.clone()).collect(),
            (None, None) => Vec::new(),
        }
    }

    /// The manifest `describe` answers (ABI.md §7.1), or the registration
    /// mistakes joined in one message.
    pub fn manifest(&self) -> Result<String, String> {
        let errs = self.validate();
        if !errs.is_empty() {
            return Err(format!("corral: plugin {}: {}", q(&self.name), errs.join("; ")));
        }
        let caps = |list: &[Cap]| Value::Array(list.iter().map(|c| Value::from(c.as_str())).collect());
        let mut m = Value::object().with("name", self.name.as_str()).with("version", self.version.as_str()).with("abi", 1);
        if let Some(t) = &self.title {
            m.insert("title", t.as_str());
        }
        if let Some(d) = &self.description {
            m.insert("description", d.as_str());
        }
        m.insert("schemes", self.schemes.clone());
        if !self.resources.is_empty() {
            m.insert("resources", self.resources.iter().map(|(r, _)| r.0.clone()).collect::<Vec<_>>());
        }
        if !self.templates.is_empty() {
            let list = self.templates.iter().map(|e| {
                let fill = Plugin::template_can_fill(e);
                if fill.is_empty() {
                    e.t.v.clone()
                } else {
                    e.t.v.clone().with("complete", fill)
                }
            });
            m.insert("templates", list.collect::<Vec<_>>());
        }
        if !self.prompts.is_empty() {
            let list = self.prompts.iter().map(|e| {
                let fill = Plugin::prompt_can_fill(e);
                if fill.is_empty() {
                    e.p.v.clone()
                } else {
                    e.p.v.clone().with("complete", fill)
                }
            });
            m.insert("prompts", list.collect::<Vec<_>>());
        }
        if !self.tools.is_empty() {
            m.insert("tools", self.tools.iter().map(|e| e.t.v.clone()).collect::<Vec<_>>());
        }
        if !self.caps.is_empty() {
            m.insert("capabilities", caps(&self.caps));
        }
        if !self.required.is_empty() {
            m.insert("requiredCapabilities", caps(&self.required));
        }
        if self.lister.is_some() {
            m.insert("listsResources", true);
        }
        Ok(m.to_string())
    }

    /// Runs one operation: `req` is its JSON request, and the response is
    /// written to `out` (cleared first); the result is the status. The ABI
    /// glue calls it for `corral_call`; tests call it directly.
    pub fn handle(&mut self, op: i32, req: &[u8], out: &mut String) -> i32 {
        out.clear();
        if self.manifest.is_none() {
            self.manifest = Some(self.manifest());
        }
        let result = match self.manifest.as_ref().unwrap() {
            Err(msg) => Err(Error::internal(msg.as_str())),
            Ok(m) if op == 1 => {
                out.push_str(m);
                return STATUS_OK;
            }
            Ok(_) => match Value::parse_bytes(req) {
                Err(e) => Err(Error::invalid_params(format!("malformed request: {}", e))),
                Ok(v) if v.as_object().is_none() => Err(Error::invalid_params("malformed request: not an object")),
                Ok(v) => self.dispatch(op, &v),
            },
        };
        match result {
            Ok(v) => {
                v.write_to(out);
                STATUS_OK
            }
            Err(e @ Error::InputRequired(_)) if matches!(op, 3 | 4 | 5) => {
                e.to_json().write_to(out);
                STATUS_INPUT_REQUIRED
            }
            Err(Error::InputRequired(_)) => {
                Error::internal("input_required is not an answer to this operation").to_json().write_to(out);
                STATUS_ERROR
            }
            Err(e) => {
                e.to_json().write_to(out);
                STATUS_ERROR
            }
        }
    }

    fn dispatch(&self, op: i32, v: &Value) -> Result<Value, Error> {
        match op {
            2 => self.list(&ListRequest::parse(v)),
            3 => self.read(&ReadRequest::parse(v)),
            4 => self.get_prompt(&PromptRequest::parse(v)),
            5 => {
                if !matches!(v.get("arguments"), None | Some(Value::Null) | Some(Value::Object(_))) {
                    return Err(Error::invalid_params("tool arguments must be a JSON object"));
                }
                self.call_tool(&ToolRequest::parse(v))
            }
            6 => self.complete(&CompleteRequest::parse(v)),
            _ => Err(Error::not_found("unknown operation")),
        }
    }

    fn list(&self, req: &ListRequest) -> Result<Value, Error> {
        let (resources, next) = match &self.lister {
            Some(f) => f(req)?,
            None => (Vec::new(), String::new()),
        };
        if resources.len() > req.limit {
            return Err(Error::internal(format!("lister returned {} resources, over the limit of {}", resources.len(), req.limit)));
        }
        if let Some(r) = resources.iter().find(|r| !self.owns(r.uri())) {
            return Err(Error::internal(format!("lister returned {}, outside the plugin's schemes", q(&r.uri()))));
        }
        let mut v = Value::object().with("resources", resources.into_iter().map(|r| r.0).collect::<Vec<_>>());
        if !next.is_empty() {
            v.insert("nextCursor", next);
        }
        Ok(v)
    }

    fn read(&self, req: &ReadRequest) -> Result<Value, Error> {
        let read = self
            .resources
            .iter()
            .find(|(r, _)| r.uri() == req.uri)
            .map(|(_, f)| f)
            .or_else(|| {
                let t = req.template.as_deref()?;
                self.templates.iter().find(|e| e.t.uri_template() == t).map(|e| &e.read)
            })
            .or(self.reader.as_ref())
            .ok_or_else(|| Error::not_found(format!("resource not found: {}", req.uri)))?;
        let res = read(req)?;
        if res.contents.is_empty() {
            return Err(Error::internal(format!("read handler returned no contents for {}", req.uri)));
        }
        Ok(res.to_json())
    }

    fn get_prompt(&self, req: &PromptRequest) -> Result<Value, Error> {
        let e = self.prompts.iter().find(|e| e.p.name() == req.name);
        let e = e.ok_or_else(|| Error::not_found(format!("prompt {} not found", q(&req.name))))?;
        for (name, required) in &e.p.args {
            if *required && req.arg(name).unwrap_or("").is_empty() {
                return Err(Error::invalid_params(format!("prompt {}: missing required argument {}", q(&req.name), q(&name))));
            }
        }
        Ok((e.get)(req)?.to_json())
    }

    fn call_tool(&self, req: &ToolRequest) -> Result<Value, Error> {
        let e = self.tools.iter().find(|e| e.t.name() == req.name);
        let e = e.ok_or_else(|| Error::not_found(format!("tool {} not found", q(&req.name))))?;
        if let Some(missing) = e.t.required().into_iter().find(|n| req.arg(n).is_none()) {
            return Ok(ToolResult::error(&format!("missing required argument {}", q(&missing))).to_json());
        }
        match (e.call)(req) {
            Ok(r) => Ok(r.to_json()),
            Err(Error::Guest { message, .. }) => Ok(ToolResult::error(&message).to_json()),
            Err(ir) => Err(ir),
        }
    }

    fn complete(&self, req: &CompleteRequest) -> Result<Value, Error> {
        let (f, fill) = match req.ref_type.as_str() {
            "ref/prompt" => {
                let e = self.prompts.iter().find(|e| e.p.name() == req.ref_name);
                let e = e.ok_or_else(|| Error::not_found(format!("prompt {} not found", q(&req.ref_name))))?;
                (e.complete.as_ref(), Plugin::prompt_can_fill(e))
            }
            "ref/resource" => {
                let e = self.templates.iter().find(|e| e.t.uri_template() == req.ref_name);
                let e = e.ok_or_else(|| Error::not_found(format!("template {} not found", q(&req.ref_name))))?;
                (e.complete.as_ref(), Plugin::template_can_fill(e))
            }
            other => return Err(Error::invalid_params(format!("unknown completion ref type {}", q(&other)))),
        };
        let mut values = match f {
            Some(f) if fill.contains(&req.argument) => f(req)?,
            _ => Vec::new(),
        };
        let total = values.len();
        let has_more = total > MAX_COMPLETIONS;
        values.truncate(MAX_COMPLETIONS);
        let mut c = Value::object().with("values", values).with("total", total);
        if has_more {
            c.insert("hasMore", true);
        }
        Ok(Value::object().with("completion", c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InputRequired;

    fn call(p: &mut Plugin, op: i32, req: &str) -> (i32, String) {
        let mut out = String::new();
        let status = p.handle(op, req.as_bytes(), &mut out);
        (status, out)
    }

    fn minimal() -> Plugin {
        let mut p = Plugin::new("t", "1");
        p.scheme("t");
        p
    }

    #[test]
    fn registration_mistakes_fail_describe() {
        type Case = (&'static str, fn(&mut Plugin), &'static str);
        let cases: [Case; 14] = [
            ("bad name", |p| *p = Plugin::new("Bad", "1"), r#"plugin name "Bad" must match"#),
            ("empty version", |p| *p = Plugin::new("t", ""), "plugin version is empty"),
            ("scheme twice", |p| {
                p.scheme("T");
            }, r#"scheme "t" claimed twice"#),
            ("bad scheme", |p| {
                p.scheme("9x");
            }, r#"scheme "9x" is not a lowercase URI scheme"#),
            ("resource outside", |p| {
                p.resource(Resource::new("u://x", "x"), |_| Err(Error::internal("")));
            }, r#"resource "u://x" is outside the plugin's schemes"#),
            ("resource twice", |p| {
                p.resource(Resource::new("t://x", "x"), |_| Err(Error::internal("")));
                p.resource(Resource::new("t://x", "y"), |_| Err(Error::internal("")));
            }, r#"resource "t://x" declared twice"#),
            ("template var", |p| {
                p.template(Template::new("t://{a}", "a").complete(&["b"]), |_| Err(Error::internal(""))).completion(|_| Ok(vec![]));
            }, r#"completable variable "b" is not in the template"#),
            ("template no handler", |p| {
                p.template(Template::new("t://{a}", "a").complete(&["a"]), |_| Err(Error::internal("")));
            }, "declares completable variables but has no completion handler"),
            ("prompt args", |p| {
                p.prompt(Prompt::new("p").argument("a", "", false).argument("a", "", false), |_| Ok(PromptResult::default()));
            }, "argument names must be non-empty and unique"),
            ("prompt complete", |p| {
                p.prompt(Prompt::new("p").complete(&["z"]), |_| Ok(PromptResult::default())).completion(|_| Ok(vec![]));
            }, r#"completable argument "z" is not an argument"#),
            ("tool schema", |p| {
                p.tool(Tool::new("x", r#"{"type":"string"}"#), |_| Ok(ToolResult::default()));
            }, r#"input schema must have type "object""#),
            ("tool name", |p| {
                p.tool(Tool::new("a b", "{\"type\":\"object\"}"), |_| Ok(ToolResult::default()));
            }, r#"tool name "a b" must match"#),
            ("task deadline without tasks", |p| {
                p.tool(Tool::new("x", "{\"type\":\"object\"}").task_deadline_ms(1000), |_| Ok(ToolResult::default()));
            }, r#"tool "x": input_first and task_deadline_ms need task support optional or required"#),
            ("task deadline zero", |p| {
                p.tool(Tool::new("x", "{\"type\":\"object\"}").task_support(TaskSupport::Required).task_deadline_ms(0), |_| {
                    Ok(ToolResult::default())
                });
            }, r#"tool "x": task deadline 0 ms is not between 1 and 86400000"#),
        ];
        for (what, setup, want) in cases {
            let mut p = minimal();
            setup(&mut p);
            let (status, out) = call(&mut p, 1, "{}");
            assert_eq!(status, STATUS_ERROR, "{}", what);
            let v = Value::parse(&out).unwrap();
            assert_eq!(v.get("code").and_then(Value::as_str), Some("internal"), "{}", what);
            let msg = v.get("message").and_then(Value::as_str).unwrap();
            assert!(msg.starts_with("corral: plugin ") && msg.contains(want), "{}: {} lacks {}", what, msg, want);
        }
    }

    #[test]
    fn task_fields_in_the_manifest() {
        let mut p = minimal();
        let job = Tool::new("job", "{\"type\":\"object\"}").task_support(TaskSupport::Optional).input_first().task_deadline_ms(300_000);
        p.tool(job, |_| Ok(ToolResult::default()));
        let m = Value::parse(&p.manifest().unwrap()).unwrap();
        let t = &m.get("tools").and_then(Value::as_array).unwrap()[0];
        assert_eq!(t.get("execution").and_then(|e| e.get("taskSupport")).and_then(Value::as_str), Some("optional"));
        assert_eq!(t.get("inputFirst").and_then(Value::as_bool), Some(true));
        assert_eq!(t.get("taskDeadlineMs").and_then(Value::as_i64), Some(300_000));
    }

    #[test]
    fn answers_protocol_errors() {
        let mut p = minimal();
        p.prompt(Prompt::new("p").argument("need", "", true), |_| Ok(PromptResult::new(vec![Message::text("user", "x")])));
        p.tool(Tool::new("t", r#"{"type":"object","required":["q"]}"#), |req| {
            Ok(ToolResult::text(req.arg("q").and_then(Value::as_str).unwrap_or("")))
        });
        p.tool(Tool::new("fails", r#"{"type":"object"}"#), |_| Err(Error::unavailable("upstream down")));
        let cases = [
            (9, "{}", STATUS_ERROR, r#"{"code":"not_found","message":"unknown operation"}"#),
            (3, "{", STATUS_ERROR, r#"{"code":"invalid_params","message":"malformed request: json: expected a member name at byte 1"}"#),
            (3, "[]", STATUS_ERROR, r#"{"code":"invalid_params","message":"malformed request: not an object"}"#),
            (3, r#"{"uri":"t://none"}"#, STATUS_ERROR, r#"{"code":"not_found","message":"resource not found: t://none"}"#),
            (4, r#"{"name":"p","arguments":{"need":""}}"#, STATUS_ERROR, r#"{"code":"invalid_params","message":"prompt \"p\": missing required argument \"need\""}"#),
            (4, r#"{"name":"q"}"#, STATUS_ERROR, r#"{"code":"not_found","message":"prompt \"q\" not found"}"#),
            (5, r#"{"name":"t","arguments":[1]}"#, STATUS_ERROR, r#"{"code":"invalid_params","message":"tool arguments must be a JSON object"}"#),
            (5, r#"{"name":"t"}"#, STATUS_OK, r#"{"content":[{"type":"text","text":"missing required argument \"q\""}],"isError":true}"#),
            (5, r#"{"name":"t","arguments":{"q":"ok"}}"#, STATUS_OK, r#"{"content":[{"type":"text","text":"ok"}]}"#),
            (5, r#"{"name":"fails"}"#, STATUS_OK, r#"{"content":[{"type":"text","text":"upstream down"}],"isError":true}"#),
            (5, r#"{"name":"nope"}"#, STATUS_ERROR, r#"{"code":"not_found","message":"tool \"nope\" not found"}"#),
            (6, r#"{"ref":{"type":"ref/x"}}"#, STATUS_ERROR, r#"{"code":"invalid_params","message":"unknown completion ref type \"ref/x\""}"#),
            (6, r#"{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"need","value":""}}"#, STATUS_OK, r#"{"completion":{"values":[],"total":0}}"#),
            (2, r#"{"limit":10}"#, STATUS_OK, r#"{"resources":[]}"#),
        ];
        for (op, req, want_status, want) in cases {
            let (status, out) = call(&mut p, op, req);
            assert_eq!((status, out.as_str()), (want_status, want), "op {} {}", op, req);
        }
    }

    #[test]
    fn completion_keeps_the_first_hundred() {
        let mut p = minimal();
        p.template(Template::new("t://{n}", "n"), |_| Err(Error::internal(""))).completion(|req| {
            Ok((0..150).map(|i| format!("{}{}", req.value, i)).collect())
        });
        let (status, out) = call(&mut p, 6, r#"{"ref":{"type":"ref/resource","uri":"t://{n}"},"argument":{"name":"n","value":"v"}}"#);
        assert_eq!(status, STATUS_OK);
        let v = Value::parse(&out).unwrap();
        let c = v.get("completion").unwrap();
        assert_eq!(c.get("values").and_then(Value::as_array).map(|a| a.len()), Some(MAX_COMPLETIONS));
        assert_eq!(c.get("values").unwrap().as_array().unwrap()[99].as_str(), Some("v99"));
        assert_eq!((c.get("total").and_then(Value::as_i64), c.get("hasMore").and_then(Value::as_bool)), (Some(150), Some(true)));
        let (_, m) = call(&mut p, 1, "{}");
        assert!(m.contains(r#""uriTemplate":"t://{n}","name":"n","complete":["n"]"#), "{}", m);
    }

    #[test]
    fn lists_pages_within_the_limit() {
        let mut p = minimal();
        p.lister(|req| {
            let n = if req.cursor.is_empty() { 2 } else { 5 };
            Ok(((0..n).map(|i| Resource::new(&format!("t://{}", i), "r")).collect(), "next".to_string()))
        });
        let (status, out) = call(&mut p, 2, r#"{"cursor":"","limit":2}"#);
        assert_eq!((status, out.as_str()), (STATUS_OK, r#"{"resources":[{"uri":"t://0","name":"r"},{"uri":"t://1","name":"r"}],"nextCursor":"next"}"#));
        let (status, out) = call(&mut p, 2, r#"{"cursor":"next","limit":2}"#);
        assert_eq!((status, out.as_str()), (STATUS_ERROR, r#"{"code":"internal","message":"lister returned 5 resources, over the limit of 2"}"#));
        let (_, m) = call(&mut p, 1, "{}");
        assert!(m.ends_with(r#""listsResources":true}"#), "{}", m);
    }

    #[test]
    fn input_required_only_where_the_abi_allows() {
        let mut p = minimal();
        let ask = || Error::from(InputRequired::new().list_roots("r").sample("s", "hi", 10).state("st"));
        p.reader(move |_| Err(ask()));
        p.prompt(Prompt::new("p"), |_| Err(InputRequired::new().state("only").into())).completion(|_| Err(InputRequired::new().state("x").into()));
        let (status, out) = call(&mut p, 3, r#"{"uri":"t://any"}"#);
        assert_eq!(status, STATUS_INPUT_REQUIRED);
        assert_eq!(out, r#"{"inputRequests":{"r":{"method":"roots/list","params":{}},"s":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}},"state":"st"}"#);
        assert_eq!(call(&mut p, 4, r#"{"name":"p"}"#), (STATUS_INPUT_REQUIRED, r#"{"state":"only"}"#.to_string()));
        let (status, _) = call(&mut p, 6, r#"{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"x"}}"#);
        assert_eq!(status, STATUS_OK, "a prompt without arguments has nothing to complete");
    }

    #[test]
    fn reads_requests_and_answers() {
        let mut p = minimal();
        p.template(Template::new("t://{+path}", "file"), |req| {
            assert_eq!(req.principal.id, "alice");
            assert_eq!(req.principal.groups, vec!["staff".to_string()]);
            assert!(req.input.has_capability("elicitation"));
            assert!(!req.input.has_capability("sampling"));
            assert_eq!(req.input.state.as_deref(), Some("s1"));
            assert_eq!(req.input.roots("r"), Some(vec!["file:///a".to_string()]));
            assert_eq!(req.input.sampled("s").as_deref(), Some("yes"));
            let e = req.input.elicitation("e").unwrap();
            assert_eq!((e.action.as_str(), e.content.get("ok").and_then(Value::as_bool)), ("accept", Some(true)));
            Ok(ReadResult {
                contents: vec![Contents::text(&req.uri, req.var("path").unwrap()), Contents::blob("t://b", b"\x00\xff").mime("application/octet-stream")],
                ttl_ms: Some(1000),
            })
        });
        let req = r#"{"uri":"t://a/b","template":"t://{+path}","variables":{"path":"a/b"},"principal":{"id":"alice","groups":["staff"]},
            "clientCapabilities":{"elicitation":{},"sampling":null},"state":"s1",
            "inputResponses":{"r":{"roots":[{"uri":"file:///a"}]},"s":{"role":"assistant","content":{"type":"text","text":"yes"}},"e":{"action":"accept","content":{"ok":true}}}}"#;
        let (status, out) = call(&mut p, 3, req);
        assert_eq!((status, out.as_str()), (STATUS_OK, r#"{"contents":[{"uri":"t://a/b","text":"a/b"},{"uri":"t://b","blob":"AP8=","mimeType":"application/octet-stream"}],"ttlMs":1000}"#));
    }

    #[test]
    fn template_variables_follow_rfc6570() {
        let cases: [(&str, &[&str]); 4] = [
            ("t://{a}/{+b}", &["a", "b"]),
            ("t://x{?q,lang}{&a*}", &["q", "lang", "a"]),
            ("t://{a:3}/{a}", &["a"]),
            ("t://{unclosed", &[]),
        ];
        for (t, want) in cases {
            assert_eq!(template_variables(t), want.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "{}", t);
        }
    }
}
