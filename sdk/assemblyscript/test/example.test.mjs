// The memory of one pooled instance of the AssemblyScript example
// provider over many calls (its behaviour is examples/assemblyscript's
// example.test.mjs and the judge's). EXAMPLE_WASM names a built file to
// test (make passes the release build); otherwise the example is compiled
// here.

import { test, before } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { readFile } from "node:fs/promises";
import { FakeHost } from "./host.mjs";
import { compile, sdkDir } from "./compile.mjs";

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
