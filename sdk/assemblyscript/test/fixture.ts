// A guest exercising the parts of the SDK the example provider does not:
// paging, fallback reads, blobs, completion caps, every input request,
// JSON round trips, HTTP bodies and aborts. Driven by sdk.test.mjs.

import {
  Cap,
  Completion,
  CompleteRequest,
  Errno,
  ListRequest,
  ListResponse,
  Plugin,
  PromptRequest,
  PromptResponse,
  ReadRequest,
  ReadResponse,
  TaskSupport,
  ToolRequest,
  ToolResponse,
  HttpRequest,
  JSONObject,
  base64Decode,
  errnoName,
  http,
  kv,
  quote,
  serve,
} from "../assembly/index";
export { corral_abi_v1, corral_buffer, corral_call } from "../assembly/index";

function readStatic(req: ReadRequest, res: ReadResponse): void {
  res.text(req.uri, "static for " + req.principal.id + " in " + req.principal.groups.join("+"), "text/plain").ttl(60000);
}

function readItem(req: ReadRequest, res: ReadResponse): void {
  const data = new Uint8Array(3);
  data[0] = 0;
  data[1] = 0xff;
  data[2] = 0x10;
  res.blob(req.uri, data, "application/octet-stream");
}

function readAny(req: ReadRequest, res: ReadResponse): void {
  if (req.uri == "fx://empty") return; // no contents: the SDK reports it
  if (req.uri.startsWith("fx://dyn/")) {
    res.text(req.uri, "dynamic");
    return;
  }
  res.notFound("no such thing");
}

// 250 dynamic resources, paged by the host's limit; the cursor is the next index.
function listDyn(req: ListRequest, res: ListResponse): void {
  const start = req.cursor.length > 0 ? I32.parseInt(req.cursor) : 0;
  let i = start;
  for (; i < 250 && i < start + req.limit; i++) {
    res.add({ uri: "fx://dyn/" + i.toString(), name: "dyn" + i.toString() });
  }
  if (i < 250) res.next(i.toString());
}

function completeMany(req: CompleteRequest, res: Completion): void {
  for (let i = 0; i < 150; i++) res.add(req.value + i.toString());
}

function getPrompt(req: PromptRequest, res: PromptResponse): void {
  if (req.input.answered("topic")) {
    const s = req.input.sampled("topic");
    res.description("with " + req.input.state).user("topic: " + (s != null ? s : "?"));
    return;
  }
  if (req.argument("style") == "ask") {
    res.needInput("step-1").sample("topic", "Pick a topic", 50).listRoots("where");
    return;
  }
  res.description("Notes").assistant("Hi " + req.argument("who")).message("user", '{"type":"text","text":"raw"}');
}

function callEcho(req: ToolRequest, res: ToolResponse): void {
  const s = req.arguments.getString("s");
  res.text(s).structured(new JSONObject().setString("s", s).setRaw("args", req.arguments.toJSON()).toString());
}

function callFail(req: ToolRequest, res: ToolResponse): void {
  const how = req.arguments.getString("how");
  if (how == "internal") res.internal("broke");
  else if (how == "unavailable") res.unavailable("down");
  else if (how == "custom") res.fail("weird", "odd", '{"x":1}');
  else res.error("tool failed: " + how);
}

function callKV(req: ToolRequest, res: ToolResponse): void {
  const r = kv.get("k");
  res.text(r.ok ? "got " + r.value.length.toString() : "kv: " + errnoName(r.errno));
}

function callFetch(req: ToolRequest, res: ToolResponse): void {
  const r = new HttpRequest();
  r.method = "POST";
  r.url = req.arguments.getString("url");
  r.headers.set("X-A", "1");
  const body = base64Decode("AP8Q");
  if (body != null) r.body = body;
  const out = http.fetch(r);
  if (!out.ok) {
    res.error("http: " + errnoName(out.errno));
    return;
  }
  const ct = out.value.headers.has("Content-Type") ? out.value.headers.get("Content-Type") : "";
  res.text(out.value.status.toString() + " " + ct + " " + out.value.text());
}

function callAsk(req: ToolRequest, res: ToolResponse): void {
  const e = req.input.elicitation("form");
  if (e == null) {
    const caps = req.input.hasCapability("elicitation") ? "yes" : "no";
    res.needInput("s-" + caps).elicit("form", "Fill it", '{"type":"object","properties":{"n":{"type":"number"}}}');
    return;
  }
  const c = e.content;
  res.text(e.action + " " + (c != null ? c.getNumber("n").toString() : "-") + " " + req.input.state);
}

function callRoots(req: ToolRequest, res: ToolResponse): void {
  const roots = req.input.roots("where");
  res.text(roots == null ? "none" : roots.join(","));
}

function callAbort(req: ToolRequest, res: ToolResponse): void {
  assert(false, "deliberate");
}

function callQuote(req: ToolRequest, res: ToolResponse): void {
  res.text(quote(req.arguments.getString("s")));
}

function callError(req: ToolRequest, res: ToolResponse): void {
  res.text(Errno.Quota == -4 ? "quota" : "?");
}

const p = new Plugin("fixture", "0.1.0").description("SDK test fixture").scheme("fx").scheme("FX2");
p.request(Cap.KV).request(Cap.HTTP).request(Cap.KV);
p.resource({ uri: "fx://static", name: "static", title: "Static", size: 42, annotations: '{"priority":0.5}' }, readStatic);
p.template({ uriTemplate: "fx://items/{id}{?v*}", name: "item" }, readItem, completeMany);
p.template({ uriTemplate: "fx2://plain/{a}/{+b}", name: "plain", complete: [] }, readItem);
p.prompt({ name: "notes", arguments: [{ name: "who", required: true, description: "someone" }, { name: "style" }] }, getPrompt, completeMany);
p.tool({ name: "echo", description: "Echo s", inputSchema: '{"type":"object","required":["s"]}' }, callEcho);
p.tool({ name: "fail" }, callFail);
p.tool({ name: "kv" }, callKV);
p.tool({ name: "fetch" }, callFetch);
p.tool({ name: "ask" }, callAsk);
p.tool({ name: "roots" }, callRoots);
p.tool({ name: "abort" }, callAbort);
p.tool({ name: "quote" }, callQuote);
p.tool({ name: "errno" }, callError);
p.tool({ name: "job", taskSupport: TaskSupport.Optional, inputFirst: true, taskDeadlineMs: 300000 }, callEcho);
p.tool({ name: "plain", taskSupport: TaskSupport.Forbidden }, callEcho);
p.list(listDyn).reader(readAny);
serve(p);
