import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepAliveFetch } from '../../../src/domain/triage-engine/providers/keep-alive-fetch.js';

/** The fetch subset the provider client relies on, against a real HTTP server. */
describe('keepAliveFetch', () => {
  let server: Server;
  let base: string;
  const seen: { method?: string; headers: Record<string, unknown>; body: string }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += String(c)));
      req.on('end', () => {
        seen.push({ method: req.method, headers: req.headers, body });
        if (req.url === '/slow') return void setTimeout(() => res.end('late'), 2_000);
        if (req.url === '/empty') return void res.writeHead(204).end();
        res.writeHead(429, {
          'content-type': 'application/json',
          'retry-after': '3',
          'set-cookie': ['a=1', 'b=2'],
        });
        res.end(JSON.stringify({ error: { message: 'slow down', code: 'rate_limit' } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('posts the body with its headers and answers with status, headers and text', async () => {
    const body = JSON.stringify({ prompt: 'é'.repeat(10) });
    const res = await keepAliveFetch(`${base}/v1`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(429);
    expect(res.ok).toBe(false);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(await res.json()).toEqual({ error: { message: 'slow down', code: 'rate_limit' } });
    const req = seen.at(-1)!;
    expect(req).toMatchObject({
      method: 'POST',
      body,
      headers: { authorization: 'Bearer k', 'content-length': String(Buffer.byteLength(body)) },
    });
  });

  it('reuses the connection', async () => {
    const ports = new Set<number>();
    server.on('connection', (s) => ports.add(s.remotePort!));
    for (let i = 0; i < 5; i++)
      await (await keepAliveFetch(`${base}/v1`, { method: 'POST', body: '{}' })).text();
    expect(ports.size).toBeLessThanOrEqual(1);
  });

  it('answers 204 with no body', async () => {
    const res = await keepAliveFetch(`${base}/empty`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
  });

  it('rejects when the signal aborts, and for what it does not support', async () => {
    await expect(
      keepAliveFetch(`${base}/slow`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(100) }),
    ).rejects.toThrow();
    await expect(keepAliveFetch('ftp://example.com/x')).rejects.toThrow('unsupported protocol');
    await expect(keepAliveFetch(`${base}/v1`, { method: 'POST', body: new Uint8Array([1]) })).rejects.toThrow(
      'string bodies only',
    );
  });
});
