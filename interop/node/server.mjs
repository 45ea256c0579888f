// server.mjs: the benchmark fixture served by the TypeScript SDK v2 server
// (@modelcontextprotocol/server 2.4.0) over Streamable HTTP, a peer row of
// `make bench` (interop/bench). It serves what every server in the
// comparison serves: COUNT resources (bfx000://doc, 1 KiB of text, then
// bfx000://item/NNNN), the prompt "greet" with arguments name and style,
// and completion of name over 1,000 candidates.
//
//   node server.mjs PORT [COUNT]
//
// It uses the SDK's documented stateless entry, createMcpHandler, with a
// factory building the server (the SDK builds one per request), behind a
// minimal node:http adapter to the web-standard fetch handler. It listens
// on 127.0.0.1 only, prints "listening 127.0.0.1:PORT", and exits when
// stdin closes so that it never outlives the harness.
import http from 'node:http';
import { McpServer, createMcpHandler, completable } from '@modelcontextprotocol/server';
import * as z from 'zod';

const port = Number(process.argv[2] ?? 0);
const count = Number(process.argv[3] ?? 100);
const scheme = 'bfx000';
const docText = 'The quick brown fox jumps over the lazy dog. '.repeat(23).slice(0, 1024);
const candidates = Array.from({ length: 1000 }, (_, i) => `cand-${String(i).padStart(4, '0')}`);
const items = Array.from({ length: Math.max(0, count - 1) }, (_, i) => String(i + 1).padStart(4, '0'));

function build() {
    const server = new McpServer({ name: 'ts-sdk-bench', version: '2.4.0' });
    server.registerResource('doc', `${scheme}://doc`, { title: '1 KiB document', mimeType: 'text/plain' },
        async uri => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: docText }] }));
    for (const n of items) {
        server.registerResource(`item-${n}`, `${scheme}://item/${n}`, { mimeType: 'text/plain' },
            async uri => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `item ${uri.href}` }] }));
    }
    server.registerPrompt('greet', {
        description: 'A greeting with two arguments',
        argsSchema: z.object({
            name: completable(z.string().describe('Who to greet'), value => candidates.filter(c => c.startsWith(value))),
            style: z.string().describe('How to answer'),
        }),
    }, ({ name, style }) => ({
        description: 'A greeting',
        messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${name}! Please answer in a ${style} style.` } }],
    }));
    return server;
}

const handler = createMcpHandler(() => build(), { responseMode: 'json' });

const srv = http.createServer(async (req, res) => {
    try {
        const chunks = [];
        for await (const c of req) chunks.push(c);
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) {
            if (Array.isArray(v)) v.forEach(x => headers.append(k, x));
            else if (v !== undefined) headers.set(k, v);
        }
        const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks);
        const response = await handler.fetch(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body }));
        const out = {};
        response.headers.forEach((v, k) => { out[k] = v; });
        res.writeHead(response.status, out);
        if (response.body) {
            for await (const c of response.body) res.write(c);
        }
        res.end();
    } catch (err) {
        res.writeHead(500).end(String(err));
    }
});
srv.keepAliveTimeout = 60000;
srv.listen(port, '127.0.0.1', () => {
    console.log(`listening 127.0.0.1:${srv.address().port}`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
