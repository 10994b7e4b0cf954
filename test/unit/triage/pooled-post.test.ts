import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeProviderPools, pooledPost } from '../../../src/domain/triage-engine/providers/pooled-post.js';

/** The provider client's transport (undici `Pool` per origin) against a real HTTP server. */
describe('pooledPost', () => {
  let server: Server;
  let base: string;
  const seen: { method?: string; headers: Record<string, unknown>; body: string }[] = [];
  const never = new AbortController().signal;

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
          'x-multi': ['a', 'b'],
        });
        res.end(JSON.stringify({ error: { message: 'slow down', code: 'rate_limit' } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await closeProviderPools();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('posts the body with its headers and answers with status, headers and text', async () => {
    const body = JSON.stringify({ prompt: 'é'.repeat(10) });
    const res = await pooledPost(`${base}/v1?x=1`, {
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body,
      signal: never,
    });
    expect(res.status).toBe(429);
    expect(res.headers.get('Retry-After')).toBe('3');
    expect(res.headers.get('x-multi')).toBe('a, b');
    expect(res.headers.has('retry-after-ms')).toBe(false);
    expect(JSON.parse(res.text)).toEqual({ error: { message: 'slow down', code: 'rate_limit' } });
    expect(seen.at(-1)).toMatchObject({
      method: 'POST',
      body,
      headers: { authorization: 'Bearer k', 'content-length': String(Buffer.byteLength(body)) },
    });
  });

  it('reuses the connection', async () => {
    const ports = new Set<number>();
    server.on('connection', (s) => ports.add(s.remotePort!));
    for (let i = 0; i < 5; i++) await pooledPost(`${base}/v1`, { headers: {}, body: '{}', signal: never });
    expect(ports.size).toBeLessThanOrEqual(1);
  });

  it('answers 204 with no body', async () => {
    const res = await pooledPost(`${base}/empty`, { headers: {}, body: '{}', signal: never });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });

  it('rejects when the signal aborts, and for what it does not support', async () => {
    await expect(
      pooledPost(`${base}/slow`, { headers: {}, body: '{}', signal: AbortSignal.timeout(100) }),
    ).rejects.toThrow();
    await expect(
      pooledPost('ftp://example.com/x', { headers: {}, body: '{}', signal: never }),
    ).rejects.toThrow('unsupported protocol');
  });
});
