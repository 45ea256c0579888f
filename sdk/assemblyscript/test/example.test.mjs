// The AssemblyScript example provider (docs/plugins.md §2) on the
// FakeHost, and the memory of one pooled instance over many calls. The
// language-neutral judge checks the same provider through bin/corral;
// these run without a server. EXAMPLE_WASM names a built file to test
// (make passes the release build); otherwise the example is compiled here.

import { test, before } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { readFile } from "node:fs/promises";
import { FakeHost, compile, sdkDir } from "./host.mjs";

const entry = path.join(sdkDir, "..", "..", "examples", "assemblyscript", "index.ts");
const P = { id: "bob" };
let example;

before(async () => {
  example = process.env.EXAMPLE_WASM ? await WebAssembly.compile(await readFile(process.env.EXAMPLE_WASM)) : await compile(entry);
});

const grants = () => ({
  caps: ["kv", "notify", "log", "config", "files", "http"],
  config: { motto: "less is more" },
  roots: ["/srv"],
  files: { "/srv/d/a.txt": "alpha", "/srv/d/b.txt": "beta!" },
  http: (req) => ({ status: 200, body: Buffer.from("pong").toString("base64") }),
});

test("reads, completion and the prompt", async () => {
  const h = await new FakeHost(grants()).instantiate(example);
  assert.equal(h.call(3, { uri: "example://readme", principal: P }).json.contents[0].text, "The corral example provider — one provider, four languages.");
  assert.equal(h.call(3, { uri: "example://counter", principal: P }).json.contents[0].text, "0");
  const fr = h.call(3, { uri: "example://greetings/fr", template: "example://greetings/{lang}", variables: { lang: "fr" }, principal: P });
  assert.deepEqual(fr.json, { contents: [{ uri: "example://greetings/fr", mimeType: "text/plain", text: "Bonjour" }] });
  assert.equal(h.call(3, { uri: "example://greetings/xx", template: "example://greetings/{lang}", variables: { lang: "xx" }, principal: P }).json.code, "not_found");
  const e = h.call(6, { ref: { type: "ref/prompt", name: "greet" }, argument: { name: "lang", value: "e" }, principal: P });
  assert.deepEqual(e.json, { completion: { values: ["en", "es"], total: 2 } });
  const name = 'Zoë "the \\ one" 😀';
  const g = h.call(4, { name: "greet", arguments: { name, lang: "it" }, principal: P });
  assert.deepEqual(g.json, {
    messages: [
      { role: "user", content: { type: "text", text: `Say Ciao to ${name}.` } },
      { role: "user", content: { type: "resource", resource: { uri: "example://greetings/it", mimeType: "text/plain", text: "Ciao" } } },
    ],
  });
  assert.deepEqual(h.call(4, { name: "greet", arguments: { name: "x", lang: "zz" }, principal: P }).json, { code: "invalid_params", message: "unknown language: zz" });
});

test("tools", async () => {
  const h = await new FakeHost(grants()).instantiate(example);
  const call = (name, args, extra = {}) => h.call(5, { name, arguments: args, principal: P, ...extra });
  assert.equal(call("shout", { text: 'héllo "x"' }).json.content[0].text, 'HéLLO "X"');
  assert.equal(call("shout", { text: 3 }).json.isError, true);
  assert.deepEqual(call("increment", {}).json, { content: [{ type: "text", text: "count: 1" }], structuredContent: { count: 1 } });
  assert.deepEqual(call("increment", {}).json.structuredContent, { count: 2 });
  assert.deepEqual(h.notifies, [{ kind: 1, payload: "example://counter" }, { kind: 1, payload: "example://counter" }]);
  assert.equal(h.call(3, { uri: "example://counter", principal: P }).json.contents[0].text, "2");
  const ask = call("reset", {});
  assert.equal(ask.status, 2);
  assert.equal(ask.text, '{"inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"Reset the counter?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}}}}');
  assert.equal(call("reset", {}, { inputResponses: { confirm: { action: "decline" } } }).json.content[0].text, "counter kept");
  assert.equal(h.kv.has("counter"), true);
  assert.equal(call("reset", {}, { inputResponses: { confirm: { action: "accept", content: { ok: true } } } }).json.content[0].text, "counter reset");
  assert.equal(h.kv.has("counter"), false);
  const probe = call("probe", { path: "/srv/d/b.txt", url: "http://127.0.0.1:1/ping" });
  assert.equal(probe.json.content[0].text, "motto: less is more\nroots: 1\nfiles: a.txt,b.txt\nsize: 5\nfile: beta!\nhttp: 200 pong");
  assert.deepEqual(h.progress.map((p) => [p.progress, p.total, p.msg]), [[1, 3, "config"], [2, 3, "files"], [3, 3, "http"]]);
  assert.deepEqual(h.logs, [{ level: 1, msg: "probe: done" }]);
});

test("a denied capability fails its step", async () => {
  const h = await new FakeHost({ caps: ["config"], config: { motto: "m" } }).instantiate(example);
  const probe = h.call(5, { name: "probe", arguments: { path: "/srv/a", url: "http://x/" }, principal: P });
  assert.deepEqual(probe.json, { content: [{ type: "text", text: "files: permission denied" }], isError: true });
  assert.equal(h.call(5, { name: "increment", arguments: {}, principal: P }).json.isError, true);
});

// One instance serves every kind of call many times over, as a pooled
// instance does: its linear memory must stop growing once warm.
function churn(h, calls) {
  const text = "ünïcödé ".repeat(300);
  const reqs = [
    [3, { uri: "example://readme", principal: P }],
    [3, { uri: "example://counter", principal: P }],
    [3, { uri: "example://greetings/de", template: "example://greetings/{lang}", variables: { lang: "de" }, principal: P }],
    [6, { ref: { type: "ref/resource", uri: "example://greetings/{lang}" }, argument: { name: "lang", value: "" }, principal: P }],
    [4, { name: "greet", arguments: { name: text, lang: "es" }, principal: P }],
    [5, { name: "shout", arguments: { text }, principal: P }],
    [5, { name: "increment", arguments: {}, principal: P }],
    [5, { name: "probe", arguments: { path: "/srv/d/a.txt", url: "http://127.0.0.1:1/" }, principal: P }],
    [5, { name: "reset", arguments: {}, principal: P }],
  ].map(([op, req]) => [op, JSON.stringify(req)]);
  for (let i = 0; i < calls; i++) {
    const [op, req] = reqs[i % reqs.length];
    const { status } = h.call(op, req);
    assert.ok(status == 0 || status == 2, `call ${i}: status ${status}`);
  }
}

test("a pooled instance stops growing", async () => {
  const h = await new FakeHost(grants()).instantiate(example);
  churn(h, 2000);
  const warm = h.memory.buffer.byteLength;
  churn(h, 30000);
  assert.equal(h.memory.buffer.byteLength, warm, `memory grew from ${warm} to ${h.memory.buffer.byteLength} bytes over 30000 calls`);
});

test("the same churn leaks under the stub runtime (the check above can fail)", async () => {
  const stub = await compile(entry, { runtime: "stub", optimize: "-O0" });
  const h = await new FakeHost(grants()).instantiate(stub);
  churn(h, 200);
  const warm = h.memory.buffer.byteLength;
  churn(h, 2000);
  assert.ok(h.memory.buffer.byteLength > warm + (1 << 20), `stub runtime: ${warm} -> ${h.memory.buffer.byteLength} bytes`);
});
