import http from 'node:http';
import https from 'node:https';
import {
  outboundUrlProblem,
  pinnedLookup,
  resolveAllowedAddresses,
  unbracket,
  type OutboundUrlOptions,
  type ResolveHost,
} from '../../../lib/outbound-url.js';

/**
 * One HTTP request to a workflow target (Jira, GitHub, a webhook), on plain `node:http`: the
 * URL rules of batch webhooks apply (https, no private or loopback hosts unless the operator
 * allows it), the host is resolved once, checked, and connected to by exactly those addresses
 * (DNS rebinding), the answer is read up to a bound, and every outcome is a value: this never
 * throws. Why not jira.js or Octokit: jira.js 6 needs Node 22, and both clients retry and sleep
 * in-process, where a delivery must instead fail fast and be retried by its BullMQ job over
 * hours (and survive a restart); what they add over this is typing we do not need.
 */
export interface HttpCallOptions extends OutboundUrlOptions {
  /** @defaultValue 10_000 */
  timeoutMs?: number;
  /** @defaultValue 262_144 */
  maxResponseBytes?: number;
  resolve?: ResolveHost;
  /**
   * The workflow's rate limit (`rate-limit.ts`): awaited before the request; null lets it go
   * (after any short wait for its slot), a number refuses it for that many milliseconds.
   */
  gate?: () => Promise<number | null>;
}

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export type HttpOutcome =
  | { ok: true; status: number; headers: http.IncomingHttpHeaders; body: string }
  | { ok: false; reason: 'timeout' | 'network_error' | 'dns_error' | 'refused_address' | 'refused_url' }
  /** Not sent: the workflow's own rate limit has no slot for `retryAfterMs`. */
  | { ok: false; reason: 'rate_limited'; retryAfterMs: number };

export async function httpCall(req: HttpRequest, options: HttpCallOptions = {}): Promise<HttpOutcome> {
  if (outboundUrlProblem(req.url, options) !== null) return { ok: false, reason: 'refused_url' };
  const refusedFor = options.gate ? await options.gate() : null;
  if (refusedFor !== null) return { ok: false, reason: 'rate_limited', retryAfterMs: refusedFor };
  return send(req, options);
}

function send(req: HttpRequest, options: HttpCallOptions): Promise<HttpOutcome> {
  const target = new URL(req.url);
  const maxBytes = options.maxResponseBytes ?? 262_144;
  return new Promise((resolve) => {
    let outgoing: http.ClientRequest | undefined;
    let settled = false;
    const settle = (outcome: HttpOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing?.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => settle({ ok: false, reason: 'timeout' }), options.timeoutMs ?? 10_000);
    resolveAllowedAddresses(target.hostname, options).then(
      (checked) => {
        if (settled) return;
        if (!checked.ok) return settle({ ok: false, reason: checked.reason });
        const transport = target.protocol === 'https:' ? https : http;
        const headers: Record<string, string> = { 'user-agent': 'vulntriage-workflows/1', ...req.headers };
        if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
        outgoing = transport.request(
          {
            method: req.method,
            host: unbracket(target.hostname),
            port: target.port === '' ? undefined : Number(target.port),
            path: `${target.pathname}${target.search}`,
            headers,
            agent: false,
            lookup: pinnedLookup(checked.addresses),
          },
          (res) => {
            const chunks: Buffer[] = [];
            let read = 0;
            const done = () =>
              settle({
                ok: true,
                status: res.statusCode ?? 0,
                headers: res.headers,
                body: Buffer.concat(chunks).toString('utf8'),
              });
            res.on('data', (chunk: Buffer) => {
              if (read < maxBytes) chunks.push(chunk.subarray(0, maxBytes - read));
              read += chunk.length;
              if (read >= maxBytes) done();
            });
            res.on('end', done);
            res.on('error', done);
          },
        );
        outgoing.on('error', () => settle({ ok: false, reason: 'network_error' }));
        outgoing.end(req.body);
      },
      () => settle({ ok: false, reason: 'dns_error' }),
    );
  });
}

/**
 * A JSON API client of one tracker: `call(method, path, body?)` sends to `base + path` with the
 * tracker's fixed headers, the body as JSON when there is one.
 */
export function jsonApi(base: string, headers: Record<string, string>, options: HttpCallOptions = {}) {
  return (method: HttpRequest['method'], path: string, body?: unknown): Promise<HttpOutcome> =>
    httpCall(
      {
        method,
        url: `${base}${path}`,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      },
      options,
    );
}
