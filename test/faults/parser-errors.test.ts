import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

/*
 * Every answer the server writes is a problem document, including those written before a route
 * runs: a URL Fastify cannot decode, and requests Node's HTTP parser refuses (docs/operations.md#failure-behaviour).
 * Raw sockets, because fetch would refuse to send most of these requests.
 */

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `request` to the server and reads the answer until the server closes the socket. */
async function raw(url: string, request: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let out = '';
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer in 10 s')));
    socket.on('data', (d) => {
      out += String(d);
      // A keep-alive answer (the routing error) leaves the socket open: stop at its body's end.
      const split = out.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(out.slice(0, split));
      if (split >= 0 && length && Buffer.byteLength(out.slice(split + 4)) >= Number(length[1])) socket.end();
    });
    socket.on('end', () => resolve(out));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
    socket.write(request);
  });
  const split = text.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(split + 4) };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('answers written before a route runs', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  }, 60_000);
  afterAll(async () => server?.close());

  it('answers an oversized header section 431 header_too_large', async () => {
    const res = await raw(
      server.url,
      `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(res.status).toBe(431);
    expect(res.headers['content-type']).toBe('application/problem+json');
    const body = JSON.parse(res.body) as { requestId: string };
    expect(body).toEqual({
      type: 'https://docs.vulntriage.dev/errors/header_too_large',
      title: 'Request header fields too large',
      status: 431,
      code: 'header_too_large',
      detail: 'The request headers are larger than this service accepts.',
      requestId: body.requestId,
    });
    expect(body.requestId).toMatch(UUID);
  });

  it('answers a URL with a broken percent escape 400 invalid_request, without a framework code', async () => {
    const res = await raw(server.url, 'GET /api/console/cases/%ZZ HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    const body = JSON.parse(res.body) as { requestId: string };
    expect(body).toEqual({
      type: 'https://docs.vulntriage.dev/errors/invalid_request',
      title: 'Invalid request',
      status: 400,
      code: 'invalid_request',
      detail: 'The URL is not valid: a percent sign must start a %XX escape.',
      requestId: body.requestId,
    });
    expect(res.body).not.toContain('FST_');
  });

  it('answers Transfer-Encoding: chunked with Content-Length 400 invalid_request', async () => {
    const res = await raw(
      server.url,
      'POST /api/v1/triage HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        'Transfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
    );
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    const body = JSON.parse(res.body) as { requestId: string };
    expect(body).toEqual({
      type: 'https://docs.vulntriage.dev/errors/invalid_request',
      title: 'Invalid request',
      status: 400,
      code: 'invalid_request',
      detail: 'Send a body with either Content-Length or Transfer-Encoding: chunked, not both.',
      requestId: body.requestId,
    });
  });

  it('answers a request that is not HTTP 400 invalid_request', async () => {
    const res = await raw(server.url, 'HELLO there\r\n\r\n');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({
      code: 'invalid_request',
      detail: 'The request is not valid HTTP/1.1.',
    });
  });
});
