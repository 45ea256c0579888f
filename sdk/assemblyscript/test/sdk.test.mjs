// Unit tests of the AssemblyScript SDK: a fixture guest compiled in
// process and driven through node's WebAssembly by the FakeHost.

import { test, before } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { FakeHost } from "./host.mjs";
import { compile, sdkDir } from "./compile.mjs";

const P = { id: "alice", groups: ["staff", "ops"] };
let fixture, broken;

before(async () => {
  [fixture, broken] = await Promise.all([
    compile(path.join(sdkDir, "test", "fixture.ts"), { optimize: "-O0" }),
    compile(path.join(sdkDir, "test", "broken.ts"), { optimize: "-O0" }),
  ]);
});

async function guest(opts) {
  return new FakeHost(opts).instantiate(fixture);
}

test("the module has the ABI's shape", async () => {
  const exports = WebAssembly.Module.exports(fixture).map((e) => `${e.kind} ${e.name}`).sort();
  assert.deepEqual(exports, ["function _initialize", "function corral_abi_v1", "function corral_buffer", "function corral_call", "memory memory"]);
  for (const imp of WebAssembly.Module.imports(fixture)) {
    assert.ok(["corral_v1", "wasi_snapshot_preview1"].includes(imp.module), `import ${imp.module}.${imp.name}`);
  }
  const h = await guest();
  assert.equal(h.exports.corral_abi_v1(), 4);
});

test("describe answers the manifest", async () => {
  const h = await guest();
  const { status, json } = h.call(1);
  assert.equal(status, 0);
  assert.deepEqual(json, {
    name: "fixture",
    version: "0.1.0",
    abi: 1,
    description: "SDK test fixture",
    schemes: ["fx", "fx2"],
    resources: [{ uri: "fx://static", name: "static", title: "Static", size: 42, annotations: { priority: 0.5 } }],
    templates: [
      { uriTemplate: "fx://items/{id}{?v*}", name: "item", complete: ["id", "v"] },
      { uriTemplate: "fx2://plain/{a}/{+b}", name: "plain" },
    ],
    prompts: [{ name: "notes", arguments: [{ name: "who", description: "someone", required: true }, { name: "style" }], complete: ["who", "style"] }],
    tools: [
      { name: "echo", description: "Echo s", inputSchema: { type: "object", required: ["s"] } },
      ...["fail", "kv", "fetch", "ask", "roots", "abort", "quote", "errno"].map((name) => ({ name, inputSchema: { type: "object" } })),
      { name: "job", inputSchema: { type: "object" }, execution: { taskSupport: "optional" }, inputFirst: true, taskDeadlineMs: 300000 },
      { name: "plain", inputSchema: { type: "object" } },
    ],
    capabilities: ["kv", "http"],
    listsResources: true,
  });
});

test("reads", async (t) => {
  const h = await guest();
  const cases = [
    {
      name: "static resource, principal, ttl",
      req: { uri: "fx://static", principal: P },
      status: 0,
      want: { contents: [{ uri: "fx://static", mimeType: "text/plain", text: "static for alice in staff+ops" }], ttlMs: 60000 },
    },
    {
      name: "template, blob",
      req: { uri: "fx://items/7", template: "fx://items/{id}{?v*}", variables: { id: "7" }, principal: P },
      status: 0,
      want: { contents: [{ uri: "fx://items/7", mimeType: "application/octet-stream", blob: "AP8Q" }] },
    },
    { name: "fallback reader", req: { uri: "fx://dyn/3", principal: P }, status: 0, want: { contents: [{ uri: "fx://dyn/3", text: "dynamic" }] } },
    { name: "reader's not found", req: { uri: "fx://nope", principal: P }, status: 1, want: { code: "not_found", message: "no such thing" } },
    {
      name: "no contents",
      req: { uri: "fx://empty", principal: P },
      status: 1,
      want: { code: "internal", message: "read handler returned no contents for fx://empty" },
    },
    { name: "malformed request", req: '{"uri":', status: 1, want: { code: "invalid_params", message: "malformed request" } },
    { name: "not an object", req: "[1]", status: 1, want: { code: "invalid_params", message: "malformed request" } },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const { status, json } = h.call(3, c.req);
      assert.equal(status, c.status);
      assert.deepEqual(json, c.want);
    });
  }
});

test("list pages by the host's limit", async () => {
  const h = await guest();
  const seen = [];
  let cursor = "";
  for (let pages = 0; pages < 10; pages++) {
    const { status, json } = h.call(2, { cursor, limit: 100, principal: P });
    assert.equal(status, 0);
    assert.ok(json.resources.length <= 100);
    seen.push(...json.resources.map((r) => r.uri));
    if (!json.nextCursor) break;
    cursor = json.nextCursor;
  }
  assert.equal(seen.length, 250);
  assert.equal(seen[249], "fx://dyn/249");
  assert.deepEqual(h.call(2, { cursor: "240", limit: 5, principal: P }).json, {
    resources: [240, 241, 242, 243, 244].map((i) => ({ uri: `fx://dyn/${i}`, name: `dyn${i}` })),
    nextCursor: "245",
  });
});

test("completion", async (t) => {
  const h = await guest();
  await t.test("over 100 values keeps 100 and says there are more", () => {
    const { status, json } = h.call(6, { ref: { type: "ref/prompt", name: "notes" }, argument: { name: "who", value: "w" }, principal: P });
    assert.equal(status, 0);
    assert.equal(json.completion.values.length, 100);
    assert.equal(json.completion.values[99], "w99");
    assert.equal(json.completion.total, 150);
    assert.equal(json.completion.hasMore, true);
  });
  await t.test("template variable", () => {
    const { json } = h.call(6, { ref: { type: "ref/resource", uri: "fx://items/{id}{?v*}" }, argument: { name: "id", value: "" }, principal: P });
    assert.equal(json.completion.values[0], "0");
  });
  await t.test("a template without completion gets none", () => {
    const { status, json } = h.call(6, { ref: { type: "ref/resource", uri: "fx2://plain/{a}/{+b}" }, argument: { name: "a", value: "" }, principal: P });
    assert.equal(status, 0);
    assert.deepEqual(json, { completion: { values: [], total: 0 } });
  });
  await t.test("unknown prompt", () => {
    const { status, json } = h.call(6, { ref: { type: "ref/prompt", name: "zzz" }, argument: { name: "a", value: "" }, principal: P });
    assert.equal(status, 1);
    assert.equal(json.code, "not_found");
  });
  await t.test("unknown ref type", () => {
    const { status, json } = h.call(6, { ref: { type: "ref/other" }, argument: { name: "a", value: "" }, principal: P });
    assert.equal(status, 1);
    assert.deepEqual(json, { code: "invalid_params", message: "unknown completion ref type ref/other" });
  });
});

test("prompts", async (t) => {
  const h = await guest();
  await t.test("messages", () => {
    const { status, json } = h.call(4, { name: "notes", arguments: { who: "Zoë" }, principal: P });
    assert.equal(status, 0);
    assert.deepEqual(json, {
      description: "Notes",
      messages: [
        { role: "assistant", content: { type: "text", text: "Hi Zoë" } },
        { role: "user", content: { type: "text", text: "raw" } },
      ],
    });
  });
  await t.test("a missing required argument", () => {
    const { status, json } = h.call(4, { name: "notes", arguments: { style: "x" }, principal: P });
    assert.equal(status, 1);
    assert.deepEqual(json, { code: "invalid_params", message: "prompt notes: missing required argument who" });
  });
  await t.test("unknown prompt", () => {
    assert.equal(h.call(4, { name: "zzz", principal: P }).json.code, "not_found");
  });
  await t.test("input required: sampling and roots, with state", () => {
    const { status, json } = h.call(4, { name: "notes", arguments: { who: "a", style: "ask" }, principal: P });
    assert.equal(status, 2);
    assert.deepEqual(json, {
      inputRequests: {
        topic: { method: "sampling/createMessage", params: { messages: [{ role: "user", content: { type: "text", text: "Pick a topic" } }], maxTokens: 50 } },
        where: { method: "roots/list", params: {} },
      },
      state: "step-1",
    });
  });
  await t.test("the retry reads the answer and the state", () => {
    const { status, json } = h.call(4, {
      name: "notes",
      arguments: { who: "a", style: "ask" },
      inputResponses: { topic: { role: "assistant", content: { type: "text", text: "whales" }, model: "m" } },
      state: "step-1",
      principal: P,
    });
    assert.equal(status, 0);
    assert.deepEqual(json, { description: "with step-1", messages: [{ role: "user", content: { type: "text", text: "topic: whales" } }] });
  });
});

// Strings the JSON reader and writer must carry unchanged.
const tricky = ['plain', 'quote " and \\ backslash', "tab\tnewline\ncr\r", "\u0000\u0001\u001f\u007f", "é ü ß — ✓", "😀 𝄞", "/slash"];

test("JSON round trips", async (t) => {
  const h = await guest();
  for (const s of tricky) {
    await t.test(JSON.stringify(s), () => {
      const { status, json } = h.call(5, { name: "echo", arguments: { s, n: [1.5, -2e-3, 10, true, null, {}] }, principal: P });
      assert.equal(status, 0);
      assert.equal(json.content[0].text, s);
      assert.deepEqual(json.structuredContent, { s, args: { s, n: [1.5, -0.002, 10, true, null, {}] } });
      assert.equal(JSON.parse(h.call(5, { name: "quote", arguments: { s }, principal: P }).json.content[0].text), s);
    });
  }
  await t.test("escaped input, a lone surrogate becomes U+FFFD", () => {
    const req = '{"name":"echo","arguments":{"s":"\\u00e9\\ud83d\\ude00\\/\\b\\f\\ud800x"},"principal":{"id":""}}';
    assert.equal(h.call(5, req).json.content[0].text, "é😀/\b\f\ufffdx");
  });
  for (const bad of ['{"name":"echo","arguments":{"s":"a\\x"}}', '{"name":"echo" "x"}', '{"name":"echo"} x', '{"a":01}', '{"a":-}', '{"a":1.}', '{"a":1e}', '{"a":tru}', '{"a":"\u0001"}']) {
    await t.test("refuses " + bad, () => {
      assert.deepEqual(h.call(5, bad).json, { code: "invalid_params", message: "malformed request" });
    });
  }
});

test("tools", async (t) => {
  const h = await guest({ caps: ["http"], http: (req) => ({ status: 201, headers: { "Content-Type": "text/plain" }, body: Buffer.from("pong ✓").toString("base64") }) });
  const call = (name, args) => h.call(5, { name, arguments: args, principal: P });
  await t.test("a missing required argument is a tool error", () => {
    assert.deepEqual(call("echo", {}).json, { content: [{ type: "text", text: "missing required argument s" }], isError: true });
  });
  await t.test("arguments that are not an object", () => {
    assert.deepEqual(call("echo", [1]).json, { code: "invalid_params", message: "tool echo: arguments must be a JSON object" });
  });
  await t.test("absent arguments are an empty object", () => {
    assert.equal(h.call(5, { name: "fail", principal: P }).json.isError, true);
  });
  await t.test("unknown tool", () => {
    assert.deepEqual(call("zzz", {}).json, { code: "not_found", message: "tool zzz not found" });
  });
  const failures = [
    ["internal", 1, { code: "internal", message: "broke" }],
    ["unavailable", 1, { code: "unavailable", message: "down" }],
    ["custom", 1, { code: "weird", message: "odd", data: { x: 1 } }],
    ["model", 0, { content: [{ type: "text", text: "tool failed: model" }], isError: true }],
  ];
  for (const [how, status, want] of failures) {
    await t.test("fail " + how, () => {
      const r = call("fail", { how });
      assert.equal(r.status, status);
      assert.deepEqual(r.json, want);
    });
  }
  await t.test("a denied capability", () => {
    assert.equal(call("kv", {}).json.content[0].text, "kv: permission denied");
  });
  await t.test("http: the request and the decoded response", () => {
    assert.equal(call("fetch", { url: "https://example.test/x" }).json.content[0].text, "201 text/plain pong ✓");
    assert.deepEqual(h.lastHTTP, { method: "POST", url: "https://example.test/x", headers: { "X-A": "1" }, body: "AP8Q" });
  });
  await t.test("elicitation, then its answer", () => {
    const ask = h.call(5, { name: "ask", arguments: {}, clientCapabilities: { elicitation: {} }, principal: P });
    assert.equal(ask.status, 2);
    assert.deepEqual(ask.json, {
      inputRequests: { form: { method: "elicitation/create", params: { mode: "form", message: "Fill it", requestedSchema: { type: "object", properties: { n: { type: "number" } } } } } },
      state: "s-yes",
    });
    const answer = h.call(5, { name: "ask", arguments: {}, inputResponses: { form: { action: "accept", content: { n: 4 } } }, state: "s-yes", principal: P });
    assert.equal(answer.json.content[0].text, "accept 4.0 s-yes");
    const declined = h.call(5, { name: "ask", arguments: {}, inputResponses: { form: { action: "decline" } }, principal: P });
    assert.equal(declined.json.content[0].text, "decline - ");
  });
  await t.test("roots answer", () => {
    const r = h.call(5, { name: "roots", arguments: {}, inputResponses: { where: { roots: [{ uri: "file:///a" }, { uri: "file:///b", name: "b" }] } }, principal: P });
    assert.equal(r.json.content[0].text, "file:///a,file:///b");
    assert.equal(call("roots", {}).json.content[0].text, "none");
  });
});

test("an abort reports on stderr and traps", async () => {
  const h = await guest();
  assert.throws(() => h.call(5, { name: "abort", arguments: {}, principal: P }), WebAssembly.RuntimeError);
  assert.match(h.stderr, /^abort: deliberate at fixture\.ts:\d+:\d+\n$/);
});

test("unknown operation", async () => {
  const h = await guest();
  assert.deepEqual(h.call(99, {}).json, { code: "not_found", message: "unknown operation" });
});

test("the request buffer grows and stays put", async () => {
  const h = await guest();
  const big = "x".repeat(100000);
  assert.equal(h.call(5, { name: "echo", arguments: { s: big }, principal: P }).json.content[0].text, big);
  const ptr = h.bufPtr;
  assert.equal(h.call(5, { name: "echo", arguments: { s: "small" }, principal: P }).json.content[0].text, "small");
  assert.equal(h.bufPtr, ptr);
  assert.equal(h.exports.corral_buffer(-1) >>> 0, 0, "a size over 1 GiB gets no buffer");
});

test("registration mistakes fail every call, naming each", async () => {
  const h = await new FakeHost().instantiate(broken);
  for (const op of [1, 3, 5]) {
    const { status, json } = h.call(op, { uri: "ok://y", name: "u", principal: P });
    assert.equal(status, 1);
    assert.equal(json.code, "internal");
    for (const part of [
      "scheme ok claimed twice",
      "scheme no way is not a lowercase URI scheme",
      "unknown capability telepathy",
      "resource ok://y needs a uri and a name",
      "template ok://{a}: completable variable b is not in the template",
      "template ok://{a} declares completable variables but has no completion handler",
      "tool name bad tool must match",
      'tool t: input schema must be a JSON object with type "object"',
      "tool u declared twice",
      "tool v: task support sometimes is not forbidden, optional or required",
      "tool w: inputFirst and taskDeadlineMs need task support optional or required",
      "tool x: task deadline -1 ms is not between 1 and 86400000",
      "plugin name Bad Name must match",
      "plugin version is empty",
      "resource other://x is outside the plugin's schemes",
    ]) {
      assert.ok(json.message.includes(part), `${json.message} lacks ${part}`);
    }
  }
});
