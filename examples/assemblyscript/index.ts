// The example provider of docs/plugins.md §2, in AssemblyScript.

import {
  Cap,
  Completion,
  CompleteRequest,
  Errno,
  Level,
  Plugin,
  PromptRequest,
  PromptResponse,
  ReadRequest,
  ReadResponse,
  TaskSupport,
  ToolRequest,
  ToolResponse,
  JSONObject,
  config,
  errnoName,
  files,
  http,
  kv,
  log,
  notify,
  progress,
  serve,
} from "../../sdk/assemblyscript/assembly/index";
export { corral_abi_v1, corral_buffer, corral_call } from "../../sdk/assemblyscript/assembly/index";

const LANGS: string[] = ["de", "en", "es", "fr", "it"];
const GREETINGS: string[] = ["Hallo", "Hello", "Hola", "Bonjour", "Ciao"];
const COUNTER = "example://counter";

function greeting(lang: string): string | null {
  const i = LANGS.indexOf(lang);
  return i < 0 ? null : GREETINGS[i];
}

function readReadme(req: ReadRequest, res: ReadResponse): void {
  res.text(req.uri, "The corral example provider — one provider, four languages.", "text/plain");
}

/** The counter stored under kv key "counter": 0 when absent, -1 on a kv failure. */
function counter(): i64 {
  const r = kv.getString("counter");
  if (r.errno == Errno.NotFound) return 0;
  if (!r.ok) return -1;
  return I64.parseInt(r.value, 10);
}

function readCounter(req: ReadRequest, res: ReadResponse): void {
  const n = counter();
  if (n < 0) {
    res.unavailable("kv: " + errnoName(kv.getString("counter").errno));
    return;
  }
  res.text(req.uri, n.toString(), "text/plain");
}

function readGreeting(req: ReadRequest, res: ReadResponse): void {
  const g = greeting(req.variable("lang"));
  if (g == null) {
    res.notFound("no greeting for " + req.uri);
    return;
  }
  res.text(req.uri, g, "text/plain");
}

function completeLang(req: CompleteRequest, res: Completion): void {
  for (let i = 0; i < LANGS.length; i++) {
    if (LANGS[i].startsWith(req.value)) res.add(LANGS[i]);
  }
}

function getGreet(req: PromptRequest, res: PromptResponse): void {
  let lang = req.argument("lang");
  if (lang.length == 0) lang = "en";
  const g = greeting(lang);
  if (g == null) {
    res.invalidParams("unknown language: " + lang);
    return;
  }
  res.user("Say " + g + " to " + req.argument("name") + ".");
  res.resource("user", "example://greetings/" + lang, g, "text/plain");
}

function callShout(req: ToolRequest, res: ToolResponse): void {
  const text = req.arguments.get("text");
  if (text == null || !text.isString) {
    res.error("text must be a string");
    return;
  }
  const s = text.string;
  const codes = new Array<i32>(s.length);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    codes[i] = c >= 0x61 && c <= 0x7a ? c - 0x20 : c;
  }
  res.text(String.fromCharCodes(codes));
}

function callIncrement(req: ToolRequest, res: ToolResponse): void {
  const r = kv.getString("counter");
  if (!r.ok && r.errno != Errno.NotFound) {
    res.error("kv: " + errnoName(r.errno));
    return;
  }
  const n = (r.ok ? I64.parseInt(r.value, 10) : 0) + 1;
  const e = kv.setString("counter", n.toString());
  if (e != Errno.OK) {
    res.error("kv: " + errnoName(e));
    return;
  }
  notify.resourceUpdated(COUNTER);
  res.text("count: " + n.toString());
  res.structured(new JSONObject().set("count", <f64>n).toString());
}

const CONFIRM_SCHEMA = '{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}';

function callReset(req: ToolRequest, res: ToolResponse): void {
  if (!req.input.answered("confirm")) {
    res.needInput().elicit("confirm", "Reset the counter?", CONFIRM_SCHEMA);
    return;
  }
  const answer = req.input.elicitation("confirm");
  let ok = false;
  if (answer != null && answer.action == "accept") {
    const content = answer.content;
    ok = content != null && content.getBool("ok");
  }
  if (!ok) {
    res.text("counter kept");
    return;
  }
  const e = kv.remove("counter");
  if (e != Errno.OK) {
    res.error("kv: " + errnoName(e));
    return;
  }
  res.text("counter reset");
}

function callProbe(req: ToolRequest, res: ToolResponse): void {
  const path = req.arguments.getString("path");
  const url = req.arguments.getString("url");
  const lines: string[] = [];

  progress(1, 3, "config");
  const motto = config.get("motto");
  if (!motto.ok) {
    res.error("config: " + errnoName(motto.errno));
    return;
  }
  lines.push("motto: " + motto.value);

  progress(2, 3, "files");
  const roots = files.roots();
  if (!roots.ok) {
    res.error("files: " + errnoName(roots.errno));
    return;
  }
  const stat = files.stat(path);
  if (!stat.ok) {
    res.error("files: " + errnoName(stat.errno));
    return;
  }
  const slash = path.lastIndexOf("/");
  const list = files.list(slash < 0 ? path : path.substring(0, slash));
  if (!list.ok) {
    res.error("files: " + errnoName(list.errno));
    return;
  }
  const content = files.readString(path);
  if (!content.ok) {
    res.error("files: " + errnoName(content.errno));
    return;
  }
  const names: string[] = [];
  for (let i = 0; i < list.value.length; i++) names.push(list.value[i].name);
  lines.push("roots: " + roots.value.length.toString());
  lines.push("files: " + names.join(","));
  lines.push("size: " + stat.value.size.toString());
  lines.push("file: " + content.value);

  progress(3, 3, "http");
  const resp = http.get(url);
  if (!resp.ok) {
    res.error("http: " + errnoName(resp.errno));
    return;
  }
  lines.push("http: " + resp.value.status.toString() + " " + resp.value.text());

  log(Level.Info, "probe: done");
  res.text(lines.join("\n"));
}

const p = new Plugin("example", "1.0.0").title("Example provider").scheme("example");
p.require(Cap.KV).request(Cap.Notify).request(Cap.Log).request(Cap.Config).request(Cap.Files).request(Cap.HTTP);
p.resource({ uri: "example://readme", name: "readme", mimeType: "text/plain" }, readReadme);
p.resource({ uri: COUNTER, name: "counter", mimeType: "text/plain" }, readCounter);
p.template({ uriTemplate: "example://greetings/{lang}", name: "greeting", mimeType: "text/plain" }, readGreeting, completeLang);
p.prompt(
  {
    name: "greet",
    description: "Greet someone",
    arguments: [{ name: "name", required: true }, { name: "lang" }],
    complete: ["lang"],
  },
  getGreet,
  completeLang,
);
p.tool(
  { name: "shout", inputSchema: '{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}' },
  callShout,
);
p.tool({ name: "increment", inputSchema: '{"type":"object","properties":{}}' }, callIncrement);
p.tool({ name: "reset", inputSchema: '{"type":"object","properties":{}}' }, callReset);
p.tool(
  {
    name: "probe",
    inputSchema: '{"type":"object","properties":{"path":{"type":"string"},"url":{"type":"string"}},"required":["path","url"]}',
    taskSupport: TaskSupport.Optional,
    taskDeadlineMs: 60000,
  },
  callProbe,
);
serve(p);
