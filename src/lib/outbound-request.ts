import http from 'node:http';
import https from 'node:https';
import {
  outboundUrlProblem,
  pinnedLookup,
  resolveAllowedAddresses,
  unbracket,
  type OutboundUrlOptions,
  type ResolveHost,
} from './outbound-url.js';

/**
 * The one way this service sends a request to a URL a customer chose (batch webhooks, every
 * workflow target). Each call applies the outbound URL rule (`outbound-url.ts`), resolves the host
 * once, refuses if ANY address is outside what the options allow, and connects to exactly those
 * addresses (DNS rebinding); no redirect is followed; the answer is read up to a bound; and every
 * outcome is a value: this never throws. Callers retry by calling again, which resolves again.
 */
export interface OutboundRequestOptions extends OutboundUrlOptions {
  /** Budget of the call: resolution, connection, response and the bounded read. @defaultValue 10_000 */
  timeoutMs?: number;
  /** Most response body bytes read; the connection is dropped there. @defaultValue 262_144 */
  maxResponseBytes?: number;
  /** How names are resolved. @defaultValue `dns.lookup` with `all: true` */
  resolve?: ResolveHost;
  /**
   * A caller's own rate limit, awaited once the URL is accepted and before resolving: null lets the
   * request go, a number refuses it for that many milliseconds (nothing is sent).
   */
  gate?: () => Promise<number | null>;
}

export interface OutboundRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** Why there is no (complete) answer. */
export type OutboundFailure = 'timeout' | 'network_error' | 'dns_error' | 'refused_address' | 'refused_url';

export type OutboundOutcome =
  /** `body` is cut at `maxResponseBytes`. */
  | { ok: true; status: number; headers: http.IncomingHttpHeaders; body: string }
  /** `status` is set when the status line arrived before the timeout or connection error. */
  | { ok: false; reason: OutboundFailure; status?: number }
  /** Not sent: the caller's `gate` has no slot for `retryAfterMs`. */
  | { ok: false; reason: 'rate_limited'; retryAfterMs: number };

/** Sends one request under the outbound rules above. Never throws. */
export async function outboundRequest(
  req: OutboundRequest,
  options: OutboundRequestOptions = {},
): Promise<OutboundOutcome> {
  if (outboundUrlProblem(req.url, options) !== null) return { ok: false, reason: 'refused_url' };
  const refusedFor = options.gate ? await options.gate() : null;
  if (refusedFor !== null) return { ok: false, reason: 'rate_limited', retryAfterMs: refusedFor };
  return send(req, options);
}

function send(req: OutboundRequest, options: OutboundRequestOptions): Promise<OutboundOutcome> {
  const target = new URL(req.url);
  const maxBytes = options.maxResponseBytes ?? 262_144;
  return new Promise((resolve) => {
    let outgoing: http.ClientRequest | undefined;
    let status: number | undefined;
    let settled = false;
    const settle = (outcome: OutboundOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing?.destroy();
      resolve(outcome);
    };
    const fail = (reason: OutboundFailure) =>
      settle(status === undefined ? { ok: false, reason } : { ok: false, reason, status });
    const timer = setTimeout(() => fail('timeout'), options.timeoutMs ?? 10_000);
    resolveAllowedAddresses(target.hostname, options).then(
      (checked) => {
        if (settled) return;
        if (!checked.ok) return fail(checked.reason);
        const transport = target.protocol === 'https:' ? https : http;
        const headers = { ...req.headers };
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
            status = res.statusCode ?? 0;
            const chunks: Buffer[] = [];
            let read = 0;
            const done = () =>
              settle({
                ok: true,
                status: status!,
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
        outgoing.on('error', () => fail('network_error'));
        outgoing.end(req.body);
      },
      () => fail('dns_error'),
    );
  });
}
