// Unit tests of the example provider (docs/plugins.md §2) on a fake host,
// under node's WebAssembly and without a server: `node --test`. They test
// the built module, EXAMPLE_WASM or the default path below; the judge
// (interop/judge_test.go) checks the same provider through bin/corral.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { FakeHost } from "../../sdk/assemblyscript/test/host.mjs";

const wasm = process.env.EXAMPLE_WASM ?? new URL("../../build/examples/assemblyscript.wasm", import.meta.url);
const example = await WebAssembly.compile(await readFile(wasm));
const P = { id: "bob" };

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
