import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { outboundRequest } from '../../../src/lib/outbound-request.js';

const opened: Server[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function serve(handler: Parameters<typeof createServer>[1]) {
  let connections = 0;
  const server = createServer(handler);
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  opened.push(server);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
  };
}

const local = { allowLoopbackHttp: true, allowPrivateHosts: true };
const post = (url: string) => ({ method: 'POST' as const, url, headers: {}, body: '{}' });

describe('outboundRequest', () => {
  it('answers status, headers and the body cut at maxResponseBytes', async () => {
    const s = await serve((_req, res) => res.writeHead(201, { 'x-a': 'b' }).end('x'.repeat(100)));
    const got = await outboundRequest(post(s.url), { ...local, maxResponseBytes: 10 });
    expect(got).toMatchObject({ ok: true, status: 201, body: 'x'.repeat(10) });
    expect(got.ok && got.headers['x-a']).toBe('b');
  });

  it('keeps the status of an answer whose body stalls past the timeout', async () => {
    const s = await serve((_req, res) => res.writeHead(200).write('partial'));
    expect(await outboundRequest(post(s.url), { ...local, timeoutMs: 200 })).toEqual({
      ok: false,
      reason: 'timeout',
      status: 200,
    });
  });

  it('asks the gate after the URL rule and before resolving; a refusal sends nothing', async () => {
    const s = await serve((_req, res) => res.writeHead(200).end());
    const asked: string[] = [];
    const resolve = async (name: string) => {
      asked.push(name);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const gate = async () => 1_500;
    expect(await outboundRequest(post(s.url), { ...local, resolve, gate })).toEqual({
      ok: false,
      reason: 'rate_limited',
      retryAfterMs: 1_500,
    });
    let gated = 0;
    const counting = async () => (gated++, null);
    expect(await outboundRequest(post('https://10.0.0.1/x'), { gate: counting })).toEqual({
      ok: false,
      reason: 'refused_url',
    });
    expect([gated, asked.length, s.connections()]).toEqual([0, 0, 0]);
  });

  it('refuses a name resolving to a private address without connecting', async () => {
    const s = await serve((_req, res) => res.writeHead(200).end());
    const port = new URL(s.url).port;
    const resolve = async () => [{ address: '127.0.0.1', family: 4 }];
    expect(await outboundRequest(post(`https://hooks.example.com:${port}/`), { resolve })).toEqual({
      ok: false,
      reason: 'refused_address',
    });
    expect(s.connections()).toBe(0);
  });
});
