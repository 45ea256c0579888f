// notify.mjs: the TypeScript SDK v2 client (@modelcontextprotocol/client)
// checks that corral delivers notifications.
//
//   node notify.mjs stdio <command> [args...]
//   node notify.mjs http <url>
//
// Environment: WATCH_FILE is a file under a root granted to the files
// plugin, WATCH_URI its file:// URI; PLUGIN_SRC is a plugin file to copy to
// PLUGIN_DST (in the served plugin directory) to change the lists. PIN
// selects the era as in client.mjs (PIN=legacy for 2025-11-25).
//
// On 2026-07-28 it opens client.listen({resourceSubscriptions,
// resourcesListChanged}); on 2025-11-25 it calls resources/subscribe and
// relies on unsolicited list_changed. It then edits WATCH_FILE until
// notifications/resources/updated arrives for WATCH_URI, copies the plugin
// and waits for notifications/resources/list_changed. Every check prints one
// JSON line {"check","ok","detail"}; the exit status is 1 if any failed.
import { copyFileSync, utimesSync, writeFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [kind, target, ...rest] = process.argv.slice(2);
const { WATCH_FILE: file, WATCH_URI: uri, PLUGIN_SRC: pluginSrc, PLUGIN_DST: pluginDst } = process.env;
if (!['stdio', 'http'].includes(kind) || !target || !file || !uri || !pluginSrc || !pluginDst) {
  console.error('usage: WATCH_FILE=… WATCH_URI=… PLUGIN_SRC=… PLUGIN_DST=… node notify.mjs stdio <command> [args...] | http <url>');
  process.exit(2);
}
const pin = process.env.PIN ?? '2026-07-28';

let failures = 0;
function report(check, ok, detail) {
  if (!ok) failures++;
  process.stdout.write(JSON.stringify({ check, ok, detail }) + '\n');
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// waitFor polls cond every 250 ms (running tick first) until it holds or
// ms pass.
async function waitFor(cond, tick, ms) {
  const end = Date.now() + ms;
  for (let n = 0; Date.now() < end; n++) {
    if (cond()) return true;
    if (tick) tick(n);
    await sleep(250);
  }
  return cond();
}

const transport =
  kind === 'http'
    ? new StreamableHTTPClientTransport(new URL(target))
    : new StdioClientTransport({ command: target, args: rest, stderr: 'inherit' });
const client = new Client(
  { name: 'corral-interop-ts-v2', version: '2.4.0' },
  { versionNegotiation: { mode: pin === 'legacy' ? 'legacy' : { pin } } },
);

const updated = [];
let listChanged = 0;
client.setNotificationHandler('notifications/resources/updated', (n) => {
  updated.push(n.params?.uri);
});
client.setNotificationHandler('notifications/resources/list_changed', () => {
  listChanged++;
});

try {
  await client.connect(transport);
} catch (e) {
  report('connect', false, { error: String(e), code: e?.code });
  process.exit(1);
}

let sub;
try {
  if (pin === 'legacy') {
    await client.subscribeResource({ uri });
  } else {
    sub = await client.listen({ resourcesListChanged: true, resourceSubscriptions: [uri] });
  }
  report('subscribe', true, sub ? { honored: sub.honoredFilter } : null);
} catch (e) {
  report('subscribe', false, { error: String(e), code: e?.code });
  process.exit(1);
}

const gotUpdate = await waitFor(() => updated.includes(uri), (n) => writeFileSync(file, `edit ${n}`), 15000);
const stray = updated.filter((u) => u !== uri);
report('resources/updated', gotUpdate && stray.length === 0, { updated: updated.length, stray });

listChanged = 0;
copyFileSync(pluginSrc, pluginDst);
const old = new Date(Date.now() - 60000); // settled: loaded after the debounce only
utimesSync(pluginDst, old, old);
const gotList = await waitFor(() => listChanged > 0, null, 20000);
report('resources/list_changed', gotList, { listChanged });

await sub?.close();
await client.close();
process.exit(failures > 0 ? 1 : 0);
