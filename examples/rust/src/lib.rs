//! The corral example provider (docs/plugins.md §2) in Rust: a static
//! resource, a kv-backed counter, a template and a prompt with completion,
//! and tools using every host capability, `input_required` included.

use corral::{
    config, files, http, kv, Cap, Contents, Errno, Error, InputRequired, Level, Message, Plugin, Prompt,
    PromptRequest, PromptResult, ReadResult, Resource, TaskSupport, Template, Tool, ToolRequest, ToolResult, Value,
};

/// The greetings, in the order completion lists them.
const LANGS: [(&str, &str); 5] = [("de", "Hallo"), ("en", "Hello"), ("es", "Hola"), ("fr", "Bonjour"), ("it", "Ciao")];

const README: &str = "The corral example provider \u{2014} one provider, four languages.";
const COUNTER_KEY: &[u8] = b"counter";
const COUNTER_URI: &str = "example://counter";

fn greeting(lang: &str) -> Option<&'static str> {
    LANGS.iter().find(|(l, _)| *l == lang).map(|(_, g)| *g)
}

fn complete_lang(prefix: &str) -> Vec<String> {
    LANGS.iter().map(|(l, _)| *l).filter(|l| l.starts_with(prefix)).map(str::to_string).collect()
}

/// The counter in kv; 0 when unset.
fn counter() -> Result<u64, Errno> {
    match kv::get(COUNTER_KEY) {
        Ok(v) => Ok(std::str::from_utf8(&v).ok().and_then(|s| s.parse().ok()).unwrap_or(0)),
        Err(Errno::NotFound) => Ok(0),
        Err(e) => Err(e),
    }
}

fn greet(req: &PromptRequest) -> Result<PromptResult, Error> {
    let lang = req.arg("lang").filter(|l| !l.is_empty()).unwrap_or("en");
    let g = greeting(lang).ok_or_else(|| Error::invalid_params(format!("unknown language: {}", lang)))?;
    let name = req.arg("name").unwrap_or("");
    let uri = format!("example://greetings/{}", lang);
    Ok(PromptResult::new(vec![
        Message::text("user", &format!("Say {} to {}.", g, name)),
        Message::resource("user", Contents::text(&uri, g).mime("text/plain")),
    ]))
}

fn increment(_: &ToolRequest) -> Result<ToolResult, Error> {
    let n = counter()? + 1;
    kv::set(COUNTER_KEY, n.to_string().as_bytes())?;
    // A dropped notification does not undo the increment.
    let _ = corral::notify_resource_updated(COUNTER_URI);
    Ok(ToolResult::text(&format!("count: {}", n)).structured(Value::object().with("count", n as i64)))
}

fn reset(req: &ToolRequest) -> Result<ToolResult, Error> {
    let answer = match req.input.elicitation("confirm") {
        Some(a) => a,
        None => {
            let schema = Value::object()
                .with("type", "object")
                .with("properties", Value::object().with("ok", Value::object().with("type", "boolean")))
                .with("required", vec![Value::from("ok")]);
            return Err(InputRequired::new().elicit("confirm", "Reset the counter?", schema).into());
        }
    };
    if answer.action == "accept" && answer.content.get("ok").and_then(Value::as_bool) == Some(true) {
        kv::delete(COUNTER_KEY)?;
        return Ok(ToolResult::text("counter reset"));
    }
    Ok(ToolResult::text("counter kept"))
}

fn probe(req: &ToolRequest) -> Result<ToolResult, Error> {
    let path = req.arg("path").and_then(Value::as_str).unwrap_or("");
    let url = req.arg("url").and_then(Value::as_str).unwrap_or("");
    let step = |name: &str, e: Errno| ToolResult::error(&format!("{}: errno {}", name, e.code()));
    let _ = corral::progress(1.0, 3.0, "config");
    let motto = match config::get("motto") {
        Ok(m) => m,
        Err(e) => return Ok(step("config", e)),
    };
    let _ = corral::progress(2.0, 3.0, "files");
    let dir = &path[..path.rfind('/').unwrap_or(0)];
    let fs = (|| Ok((files::roots()?, files::stat(path)?, files::list(dir)?, files::read(path)?)))();
    let (roots, info, entries, content) = match fs {
        Ok(v) => v,
        Err(e) => return Ok(step("files", e)),
    };
    let _ = corral::progress(3.0, 3.0, "http");
    let resp = match http::get(url) {
        Ok(r) => r,
        Err(e) => return Ok(step("http", e)),
    };
    let _ = corral::log(Level::Info, "probe: done");
    let names: Vec<&str> = entries.iter().map(|f| f.name.as_str()).collect();
    let lines = [
        format!("motto: {}", motto),
        format!("roots: {}", roots.len()),
        format!("files: {}", names.join(",")),
        format!("size: {}", info.size),
        format!("file: {}", String::from_utf8_lossy(&content)),
        format!("http: {} {}", resp.status, String::from_utf8_lossy(&resp.body)),
    ];
    Ok(ToolResult::text(&lines.join("\n")))
}

/// Builds the provider.
pub fn build() -> Plugin {
    let mut p = Plugin::new("example", "1.0.0");
    p.title("Example provider").scheme("example");
    p.request(&[Cap::Kv, Cap::Notify, Cap::Log, Cap::Config, Cap::Files, Cap::Http]).require(&[Cap::Kv]);
    p.resource(Resource::new("example://readme", "readme").mime("text/plain"), |req| {
        Ok(ReadResult::text(&req.uri, "text/plain", README))
    });
    p.resource(Resource::new(COUNTER_URI, "counter").mime("text/plain"), |req| {
        Ok(ReadResult::text(&req.uri, "text/plain", &counter()?.to_string()))
    });
    p.template(Template::new("example://greetings/{lang}", "greeting").mime("text/plain"), |req| {
        let lang = req.var("lang").unwrap_or("");
        let g = greeting(lang).ok_or_else(|| Error::not_found(format!("no greeting for {}", lang)))?;
        Ok(ReadResult::text(&req.uri, "text/plain", g))
    })
    .completion(|req| Ok(complete_lang(&req.value)));
    let prompt = Prompt::new("greet").description("Greet someone").argument("name", "", true).argument("lang", "", false);
    p.prompt(prompt.complete(&["lang"]), greet).completion(|req| Ok(complete_lang(&req.value)));
    let shout = r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#;
    p.tool(Tool::new("shout", shout), |req| match req.arg("text").and_then(Value::as_str) {
        Some(t) => Ok(ToolResult::text(&t.to_ascii_uppercase())),
        None => Ok(ToolResult::error("text must be a string")),
    });
    p.tool(Tool::new("increment", r#"{"type":"object","properties":{}}"#), increment);
    p.tool(Tool::new("reset", r#"{"type":"object","properties":{}}"#), reset);
    let probe_schema = r#"{"type":"object","properties":{"path":{"type":"string"},"url":{"type":"string"}},"required":["path","url"]}"#;
    p.tool(Tool::new("probe", probe_schema).task_support(TaskSupport::Optional).task_deadline_ms(60_000), probe);
    p
}

corral::plugin!(build);

#[cfg(test)]
mod tests {
    use super::*;
    use corral::fake::{self, FakeHost};
    use corral::{STATUS_ERROR, STATUS_INPUT_REQUIRED, STATUS_OK};

    fn call(p: &mut Plugin, op: i32, req: &str) -> (i32, Value) {
        let mut out = String::new();
        let status = p.handle(op, req.as_bytes(), &mut out);
        (status, Value::parse(&out).unwrap_or_else(|e| panic!("{}: {}", out, e)))
    }

    fn text(v: &Value) -> &str {
        v.get("content").and_then(|c| c.as_array()).and_then(|c| c[0].get("text")).and_then(Value::as_str).unwrap_or("")
    }

    #[test]
    fn manifest_is_the_spec() {
        let (status, m) = call(&mut build(), 1, "{}");
        assert_eq!(status, STATUS_OK);
        let want = r#"{"name":"example","version":"1.0.0","abi":1,"title":"Example provider","schemes":["example"],"resources":[{"uri":"example://readme","name":"readme","mimeType":"text/plain"},{"uri":"example://counter","name":"counter","mimeType":"text/plain"}],"templates":[{"uriTemplate":"example://greetings/{lang}","name":"greeting","mimeType":"text/plain","complete":["lang"]}],"prompts":[{"name":"greet","description":"Greet someone","arguments":[{"name":"name","required":true},{"name":"lang"}],"complete":["lang"]}],"tools":[{"name":"shout","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},{"name":"increment","inputSchema":{"type":"object","properties":{}}},{"name":"reset","inputSchema":{"type":"object","properties":{}}},{"name":"probe","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"url":{"type":"string"}},"required":["path","url"]},"execution":{"taskSupport":"optional"},"taskDeadlineMs":60000}],"capabilities":["kv","notify","log","config","files","http"],"requiredCapabilities":["kv"]}"#;
        assert_eq!(m.to_string(), want);
    }

    #[test]
    fn completes_languages_by_prefix() {
        let cases = [("e", r#"["en","es"]"#, 2), ("", r#"["de","en","es","fr","it"]"#, 5), ("x", "[]", 0)];
        for (prefix, values, total) in cases {
            for r in [r#"{"type":"ref/prompt","name":"greet"}"#, r#"{"type":"ref/resource","uri":"example://greetings/{lang}"}"#] {
                let req = format!(r#"{{"ref":{},"argument":{{"name":"lang","value":"{}"}}}}"#, r, prefix);
                let (status, v) = call(&mut build(), 6, &req);
                assert_eq!(status, STATUS_OK);
                let c = v.get("completion").unwrap();
                assert_eq!(c.get("values").unwrap().to_string(), values, "prefix {:?}", prefix);
                assert_eq!(c.get("total").and_then(Value::as_i64), Some(total));
            }
        }
    }

    #[test]
    fn greet_round_trips_the_name() {
        let (status, v) = call(&mut build(), 4, r#"{"name":"greet","arguments":{"name":"Zoë \"Q\" \\ 😀","lang":"fr"}}"#);
        assert_eq!(status, STATUS_OK);
        let want = r#"{"messages":[{"role":"user","content":{"type":"text","text":"Say Bonjour to Zoë \"Q\" \\ 😀."}},{"role":"user","content":{"type":"resource","resource":{"uri":"example://greetings/fr","text":"Bonjour","mimeType":"text/plain"}}}]}"#;
        assert_eq!(v.to_string(), want);
        let (status, v) = call(&mut build(), 4, r#"{"name":"greet","arguments":{"name":"x","lang":"tlh"}}"#);
        assert_eq!((status, v.to_string()), (STATUS_ERROR, r#"{"code":"invalid_params","message":"unknown language: tlh"}"#.to_string()));
    }

    #[test]
    fn counts_in_kv_and_notifies() {
        fake::install(FakeHost::new().grant(&["kv", "notify"]));
        let mut p = build();
        for want in ["count: 1", "count: 2"] {
            let (status, v) = call(&mut p, 5, r#"{"name":"increment","arguments":{}}"#);
            assert_eq!((status, text(&v)), (STATUS_OK, want));
        }
        let (_, v) = call(&mut p, 3, r#"{"uri":"example://counter"}"#);
        assert_eq!(v.get("contents").unwrap().as_array().unwrap()[0].get("text").and_then(Value::as_str), Some("2"));
        fake::with(|h| {
            assert_eq!(h.kv.get(COUNTER_KEY).map(|v| v.as_slice()), Some(&b"2"[..]));
            assert_eq!(h.notifications, vec![(1, COUNTER_URI.to_string()), (1, COUNTER_URI.to_string())]);
        });
    }

    #[test]
    fn increment_without_kv_is_a_tool_error() {
        fake::install(FakeHost::new());
        let (status, v) = call(&mut build(), 5, r#"{"name":"increment"}"#);
        assert_eq!(status, STATUS_OK);
        assert_eq!(v.get("isError").and_then(Value::as_bool), Some(true));
    }

    #[test]
    fn reset_asks_then_obeys() {
        fake::install(FakeHost::new().grant(&["kv"]));
        fake::with(|h| h.kv.insert(COUNTER_KEY.to_vec(), b"7".to_vec()));
        let mut p = build();
        let (status, v) = call(&mut p, 5, r#"{"name":"reset","arguments":{}}"#);
        assert_eq!(status, STATUS_INPUT_REQUIRED);
        assert_eq!(v.to_string(), r#"{"inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"Reset the counter?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}}}}"#);
        let (_, v) = call(&mut p, 5, r#"{"name":"reset","inputResponses":{"confirm":{"action":"decline"}}}"#);
        assert_eq!(text(&v), "counter kept");
        assert!(fake::with(|h| h.kv.contains_key(COUNTER_KEY)));
        let (_, v) = call(&mut p, 5, r#"{"name":"reset","inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}}}"#);
        assert_eq!(text(&v), "counter reset");
        assert!(!fake::with(|h| h.kv.contains_key(COUNTER_KEY)));
    }

    #[test]
    fn probe_uses_every_capability() {
        let mut h = FakeHost::new().grant(&["config", "files", "http", "log"]);
        h.config.insert("motto".into(), "carpe diem".into());
        h.roots = vec!["/srv".into()];
        h.files.insert("/srv/d/a.txt".into(), b"alpha".to_vec());
        h.files.insert("/srv/d/b.txt".into(), b"b".to_vec());
        h.http = Some(Box::new(|req| {
            assert_eq!(req.to_string(), r#"{"method":"GET","url":"http://x/ping"}"#);
            Ok(Value::parse(r#"{"status":200,"headers":{},"body":"cG9uZw=="}"#).unwrap())
        }));
        fake::install(h);
        let (status, v) = call(&mut build(), 5, r#"{"name":"probe","arguments":{"path":"/srv/d/a.txt","url":"http://x/ping"}}"#);
        assert_eq!(status, STATUS_OK);
        assert_eq!(text(&v), "motto: carpe diem\nroots: 1\nfiles: a.txt,b.txt\nsize: 5\nfile: alpha\nhttp: 200 pong");
        fake::with(|h| {
            assert_eq!(h.logs, vec![(1, "probe: done".to_string())]);
            assert_eq!(h.progress_reports.iter().map(|r| r.2.as_str()).collect::<Vec<_>>(), ["config", "files", "http"]);
        });
        fake::install(FakeHost::new().grant(&["config"]));
        fake::with(|h| h.config.insert("motto".into(), "m".into()));
        let (_, v) = call(&mut build(), 5, r#"{"name":"probe","arguments":{"path":"/srv/d/a.txt","url":"http://x/ping"}}"#);
        assert_eq!((text(&v), v.get("isError").and_then(Value::as_bool)), ("files: errno -1", Some(true)));
    }

    #[test]
    fn reads_and_misses() {
        fake::install(FakeHost::new().grant(&["kv"]));
        let cases = [
            (r#"{"uri":"example://readme"}"#, STATUS_OK, README),
            (r#"{"uri":"example://counter"}"#, STATUS_OK, "0"),
            (r#"{"uri":"example://greetings/it","template":"example://greetings/{lang}","variables":{"lang":"it"}}"#, STATUS_OK, "Ciao"),
            (r#"{"uri":"example://greetings/xx","template":"example://greetings/{lang}","variables":{"lang":"xx"}}"#, STATUS_ERROR, "not_found"),
            (r#"{"uri":"example://nothing"}"#, STATUS_ERROR, "not_found"),
        ];
        for (req, want_status, want) in cases {
            let (status, v) = call(&mut build(), 3, req);
            assert_eq!(status, want_status, "{}", req);
            let got = match status {
                STATUS_OK => v.get("contents").unwrap().as_array().unwrap()[0].get("text").and_then(Value::as_str).unwrap().to_string(),
                _ => v.get("code").and_then(Value::as_str).unwrap().to_string(),
            };
            assert_eq!(got, want, "{}", req);
        }
    }
}
