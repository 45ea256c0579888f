// client.mjs: the TypeScript SDK v2 client (@modelcontextprotocol/client)
// judges an MCP server that serves the conformance fixtures.
//
//   node client.mjs stdio <command> [args...]
//   node client.mjs http <url>
//
// The client is pinned to protocol version 2026-07-28 (PIN overrides it, e.g.
// PIN=legacy for 2025-11-25). Every check prints one JSON line
// {"check","ok","detail"} on stdout; the exit status is 1 if any check
// failed and 2 on bad usage. It must run from a folder whose node_modules
// holds the pinned peers (interop/.peers, installed by `make peers`).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [kind, target, ...rest] = process.argv.slice(2);
if (!['stdio', 'http'].includes(kind) || !target) {
  console.error('usage: node client.mjs stdio <command> [args...] | http <url>');
  process.exit(2);
}

const pin = process.env.PIN ?? '2026-07-28';
const era = pin === 'legacy' ? '2025-11-25' : pin;
const missingURI = 'test://interop/no-such-resource';
const notFoundCode = era === '2025-11-25' ? -32002 : -32602;
const pngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

let failures = 0;

function report(check, ok, detail) {
  if (!ok) failures++;
  process.stdout.write(JSON.stringify({ check, ok, detail }) + '\n');
}

// check runs fn; fn returns a detail on success and throws on failure.
async function check(name, fn) {
  try {
    report(name, true, (await fn()) ?? null);
  } catch (e) {
    report(name, false, {
      error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
      code: e?.code,
      data: e?.data,
    });
  }
}

function expect(cond, message) {
  if (!cond) throw new Error(message);
}

function noDuplicates(items) {
  const dup = items.filter((x, i) => items.indexOf(x) !== i);
  expect(dup.length === 0, `listed more than once: ${JSON.stringify(dup)}`);
}

const transport =
  kind === 'http'
    ? new StreamableHTTPClientTransport(new URL(target))
    : new StdioClientTransport({ command: target, args: rest, stderr: 'inherit' });

const client = new Client(
  { name: 'corral-interop-ts-v2', version: '2.4.0' },
  {
    versionNegotiation: { mode: pin === 'legacy' ? 'legacy' : { pin } },
    enforceStrictCapabilities: true,
  },
);

try {
  await client.connect(transport);
} catch (e) {
  report('connect', false, { error: String(e), code: e?.code, data: e?.data });
  process.exit(1);
}

await check('version', async () => {
  const v = client.getNegotiatedProtocolVersion();
  expect(v === era, `negotiated ${v}, want ${era}`);
  return { version: v, era: client.getProtocolEra?.() };
});

// The no-cursor list calls make the SDK walk every page to the end.
await check('resources/list', async () => {
  const { resources } = await client.listResources();
  const uris = resources.map((r) => r.uri);
  noDuplicates(uris);
  for (const u of ['test://static-text', 'test://static-binary']) {
    expect(uris.includes(u), `${u} not listed; got ${JSON.stringify(uris)}`);
  }
  return { count: uris.length };
});

await check('resources/templates/list', async () => {
  const { resourceTemplates } = await client.listResourceTemplates();
  const ts = resourceTemplates.map((t) => t.uriTemplate);
  noDuplicates(ts);
  expect(ts.includes('test://template/{id}/data'), `template not listed; got ${JSON.stringify(ts)}`);
  return { count: ts.length };
});

await check('prompts/list', async () => {
  const { prompts } = await client.listPrompts();
  const names = prompts.map((p) => p.name);
  noDuplicates(names);
  for (const n of ['test_simple_prompt', 'test_prompt_with_arguments']) {
    expect(names.includes(n), `${n} not listed; got ${JSON.stringify(names)}`);
  }
  return { count: names.length };
});

await check('tools/list', async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  noDuplicates(names);
  expect(names.includes('test_simple_text'), `test_simple_text not listed; got ${JSON.stringify(names)}`);
  return { count: names.length };
});

await check('read text', async () => {
  const { contents } = await client.readResource({ uri: 'test://static-text' });
  expect(contents.length === 1, `got ${contents.length} contents, want 1`);
  const c = contents[0];
  expect(c.uri === 'test://static-text', `contents uri ${c.uri}`);
  expect(c.mimeType === 'text/plain', `mimeType ${c.mimeType}, want text/plain`);
  expect(typeof c.text === 'string' && c.text.length > 0, 'want non-empty text');
  return { length: c.text.length };
});

await check('read blob', async () => {
  const { contents } = await client.readResource({ uri: 'test://static-binary' });
  expect(contents.length === 1, `got ${contents.length} contents, want 1`);
  const c = contents[0];
  expect(c.mimeType === 'image/png', `mimeType ${c.mimeType}, want image/png`);
  expect(typeof c.blob === 'string' && c.blob.length > 0, 'want a non-empty blob');
  const bytes = Buffer.from(c.blob, 'base64');
  expect(bytes.toString('base64') === c.blob.replace(/\s/g, ''), 'blob is not canonical base64');
  expect(pngSignature.every((b, i) => bytes[i] === b), 'blob does not start with the PNG signature');
  return { bytes: bytes.length };
});

await check('read template', async () => {
  const uri = 'test://template/42/data';
  const { contents } = await client.readResource({ uri });
  expect(contents.length > 0, 'no contents');
  expect(contents[0].uri === uri, `contents uri ${contents[0].uri}`);
  expect(String(contents[0].text).includes('42'), `text ${JSON.stringify(contents[0].text)} lacks 42`);
  return null;
});

await check('get prompt', async () => {
  const args = { arg1: 'alpha-71', arg2: 'beta-93' };
  const { messages } = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: args });
  const text = messages.map((m) => (m.content?.type === 'text' ? m.content.text : '')).join('\n');
  for (const v of Object.values(args)) expect(text.includes(v), `prompt text lacks ${v}: ${JSON.stringify(text)}`);
  return { messages: messages.length };
});

await check('complete', async () => {
  const { completion } = await client.complete({
    ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
    argument: { name: 'arg1', value: '' },
  });
  expect(Array.isArray(completion.values), 'completion.values is not an array');
  expect(completion.values.length <= 100, `${completion.values.length} values, at most 100 allowed`);
  return { values: completion.values.length };
});

await check('call tool', async () => {
  const r = await client.callTool({ name: 'test_simple_text', arguments: {} });
  expect(!r.isError, `isError: ${JSON.stringify(r.content)}`);
  const texts = (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text);
  expect(texts.length > 0 && texts[0].length > 0, 'want a non-empty text content');
  return null;
});

await check('missing resource', async () => {
  let result;
  try {
    result = await client.readResource({ uri: missingURI });
  } catch (e) {
    expect(e?.code === notFoundCode, `error code ${e?.code} (${e?.message}), want ${notFoundCode}`);
    expect(e?.data?.uri === missingURI, `error data ${JSON.stringify(e?.data)}, want uri ${missingURI}`);
    return { code: e.code, data: e.data };
  }
  throw new Error(`read succeeded with ${result?.contents?.length} contents; want a JSON-RPC error`);
});

await client.close();
process.exit(failures > 0 ? 1 : 0);
