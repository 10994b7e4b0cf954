import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVulnTriageClient, retryingFetch, VulnTriageError, type RetryPolicy } from '../src/index.js';

/*
 * Retries over real HTTP: a server on 127.0.0.1 answers what the service answers when it is
 * busy (429 or 503 problem documents with Retry-After), then the real answer.
 */

const problem = (status: number, code: string) =>
  JSON.stringify({
    type: `https://docs.vulntriage.dev/errors/${code}`,
    title: code,
    status,
    code,
    detail: `${code}.`,
  });

/** Each request takes the next scripted answer; the last one repeats. */
let script: { status: number; code?: string; retryAfter?: string }[] = [];
const seen: { method: string; body: string; key: string | undefined }[] = [];
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', body, key: req.headers['x-api-key'] as string | undefined });
      const answer = script.length > 1 ? script.shift()! : script[0]!;
      const headers: Record<string, string> = {
        'content-type': answer.code ? 'application/problem+json' : 'application/json',
      };
      if (answer.retryAfter !== undefined) headers['retry-after'] = answer.retryAfter;
      res.writeHead(answer.status, headers);
      res.end(
        answer.code
          ? problem(answer.status, answer.code)
          : JSON.stringify({ object: 'list', data: [], nextCursor: null }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const policy: RetryPolicy = { attempts: 3, baseDelayMs: 10, maxDelayMs: 50, maxRetryAfterMs: 5_000 };

describe('retries', () => {
  it('waits what Retry-After says after a 429, then a 503, and sends the same body each time', async () => {
    script = [
      { status: 429, code: 'rate_limited', retryAfter: '1' },
      { status: 503, code: 'overloaded', retryAfter: '0' },
      { status: 200 },
    ];
    seen.length = 0;
    const waits: number[] = [];
    const client = createVulnTriageClient({
      baseUrl,
      apiKey: 'svc_test',
      retry: policy,
      onRetry: (i) => waits.push(i.waitMs),
    });
    const started = Date.now();
    const res = await client.POST('/api/v1/cases/triage', { body: { severity: 'HIGH' } });
    expect(res.response.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(waits).toEqual([1000, 0]);
    expect(seen.map((s) => s.body)).toEqual(Array(3).fill('{"severity":"HIGH"}'));
    expect(seen.every((s) => s.key === 'svc_test')).toBe(true);
  });

  it('gives up after the last try with an exhausted error naming the last refusal', async () => {
    script = [{ status: 503, code: 'overloaded', retryAfter: '0' }];
    seen.length = 0;
    const client = createVulnTriageClient({ baseUrl, apiKey: 'svc_test', retry: policy });
    const error = await client.GET('/api/v1/cases').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VulnTriageError);
    expect(error).toMatchObject({
      status: 503,
      exhausted: true,
      code: 'overloaded',
      message: 'overloaded. [503 overloaded] (gave up after 3 tries)',
    });
    expect(seen).toHaveLength(3);
  });

  it('does not retry a monthly limit, and hands its answer back whole', async () => {
    script = [{ status: 429, code: 'monthly_limit_exceeded', retryAfter: '86400' }];
    seen.length = 0;
    const client = createVulnTriageClient({ baseUrl, apiKey: 'svc_test', retry: policy });
    const res = await client.GET('/api/v1/cases');
    expect(res.response.status).toBe(429);
    expect(res.response.headers.get('retry-after')).toBe('86400');
    expect(res.error).toMatchObject({ code: 'monthly_limit_exceeded', status: 429 });
    expect(seen).toHaveLength(1);
  });

  it('refuses to sleep through a Retry-After longer than the policy allows', async () => {
    script = [{ status: 429, code: 'rate_limited', retryAfter: '60' }];
    seen.length = 0;
    const send = retryingFetch(policy);
    await expect(send(new Request(`${baseUrl}/api/v1/cases`))).rejects.toMatchObject({
      exhausted: true,
      message: 'rate_limited. [429 rate_limited] (the server asks to wait 60 s; not waiting)',
    });
    expect(seen).toHaveLength(1);
  });

  it('retries a refused connection and then names it', async () => {
    const spare = createServer();
    await new Promise<void>((r) => spare.listen(0, '127.0.0.1', r));
    const port = (spare.address() as AddressInfo).port;
    await new Promise((r) => spare.close(r));
    const closed = createVulnTriageClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'k',
      retry: { ...policy, attempts: 2 },
    });
    await expect(closed.GET('/api/v1/cases')).rejects.toMatchObject({
      status: 0,
      exhausted: true,
      message: `Could not reach http://127.0.0.1:${port}: ECONNREFUSED (gave up after 2 tries)`,
    });
  });
});
