import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { PassThrough, Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { VulnTriageClient } from './client.js';
import { networkError, refusal, VulnTriageError } from './errors.js';
import type { paths } from './generated/openapi.js';
import { fileSha256, idempotencyKeyFor } from './idempotency.js';
import { isRetryable, parseRetryAfter, withRetries, type Attempt } from './retry.js';

type UploadOperation = paths['/api/pipeline/scan']['post'];
/** The query of `POST /api/pipeline/scan`: name, format, asset context, triage (docs/ingestion.md#upload). */
export type UploadQuery = NonNullable<UploadOperation['parameters']['query']>;
/** Its 202: `{ scanId, status, statusUrl }`. */
export type ScanAccepted = UploadOperation['responses'][202]['content']['application/json'];

export interface UploadOptions {
  /**
   * A file path (read again from its first byte on each retry), or a stream / async iterable of
   * bytes (sent once: a stream cannot be rewound, so a retryable failure ends the upload).
   */
  source: string | Readable | AsyncIterable<Uint8Array>;
  query?: UploadQuery;
  /**
   * Makes a repeated upload return the first scan instead of a second (docs/api.md#idempotency).
   * @defaultValue for a file, `vt1-` and a hash of its SHA-256 and `query`; for a stream, a random UUID
   */
  idempotencyKey?: string;
  /** Compress on the fly and send `Content-Encoding: gzip` (chunked: the compressed size is unknown up front). @defaultValue false */
  gzip?: boolean;
  /** Told the bytes of the source read so far, from 0 at each try. */
  onBytes?: (sent: number) => void;
}

/**
 * How long a failed request socket waits for the answer the server may already have sent: a
 * refusal mid-upload (413 past the limit) closes the connection, and the write error can reach
 * us just before the response does.
 */
const ANSWER_GRACE_MS = 250;

/** `path` under `baseUrl`, which may itself carry a path prefix. */
function apiUrl(baseUrl: string, path: string, query: Record<string, unknown>): URL {
  const url = new URL(path.replace(/^\//, ''), baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  return url;
}

function counter(onBytes: (total: number) => void): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      total += chunk.length;
      onBytes(total);
      done(null, chunk);
    },
  });
}

interface Body {
  open(): Readable;
  /** Known for a file: sent as Content-Length unless gzipped. */
  size: number | null;
  label: string;
}

/** One try: streams the body (gzipped on the fly if asked) as the raw body of the upload. */
function uploadOnce(
  client: VulnTriageClient,
  body: Body,
  opts: { query: UploadQuery; key: string; gzip: boolean; onBytes: (n: number) => void },
): Promise<Attempt<ScanAccepted>> {
  const url = apiUrl(client.connection.baseUrl, '/api/pipeline/scan', opts.query);
  const headers: Record<string, string> = {
    'x-api-key': client.connection.apiKey,
    'user-agent': client.userAgent,
    accept: 'application/json, application/problem+json',
    'content-type': 'application/octet-stream',
    'idempotency-key': opts.key,
  };
  if (opts.gzip) headers['content-encoding'] = 'gzip';
  else if (body.size !== null) headers['content-length'] = String(body.size);
  const request = (url.protocol === 'https:' ? https : http).request(url, { method: 'POST', headers });
  opts.onBytes(0);
  return new Promise((resolve) => {
    let settled = false;
    let answered = false;
    const settle = (a: Attempt<ScanAccepted>) => {
      if (settled) return;
      settled = true;
      resolve(a);
    };
    const failed = (error: VulnTriageError, retryable: boolean) =>
      settle({ ok: false, error, retryable, retryAfterMs: null });
    request.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => failed(networkError(url, err), true));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          try {
            return settle({ ok: true, value: JSON.parse(text) as ScanAccepted });
          } catch {
            return failed(
              new VulnTriageError('The service accepted the upload but its answer is not JSON.', { status }),
              false,
            );
          }
        }
        const error = refusal(status, res.statusMessage ?? '', text);
        const retryAfter = res.headers['retry-after'];
        settle({
          ok: false,
          error,
          retryable: isRetryable(status, error.code),
          retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
        });
      });
    });
    let requestFailed = false;
    request.on('error', (err) => {
      requestFailed = true;
      if (answered) return;
      setTimeout(() => {
        if (!answered) failed(networkError(url, err), true);
      }, ANSWER_GRACE_MS);
    });
    const source = body.open();
    // The pipeline destroys the source with the request's own error: only a read error is the source's.
    source.on('error', (err) => {
      if (requestFailed) return;
      failed(
        new VulnTriageError(`Cannot read ${body.label}: ${err.message}`, {
          kind: 'unreadable',
          status: 0,
          cause: err,
        }),
        false,
      );
    });
    // Errors surface through the request's events above; the pipeline's own rejection repeats them.
    pipeline(source, counter(opts.onBytes), opts.gzip ? createGzip() : new PassThrough(), request).catch(
      () => undefined,
    );
  });
}

/**
 * Uploads a scan by streaming it (never held in memory) to `POST /api/pipeline/scan`, with an
 * Idempotency-Key, so a retry after a 429, 503 or a reset connection (a file is sent again from
 * its first byte) returns the scan the server may already have stored instead of a second one.
 */
export async function uploadScan(client: VulnTriageClient, options: UploadOptions): Promise<ScanAccepted> {
  const query = options.query ?? {};
  const onBytes = options.onBytes ?? (() => undefined);
  const gzip = options.gzip ?? false;
  const { source } = options;
  if (typeof source === 'string') {
    let size: number;
    try {
      size = (await stat(source)).size;
    } catch (err) {
      throw new VulnTriageError(`Cannot read ${source}: ${(err as Error).message}`, {
        status: 0,
        cause: err,
      });
    }
    const key = options.idempotencyKey ?? idempotencyKeyFor(await fileSha256(source), query);
    const body: Body = { open: () => createReadStream(source), size, label: source };
    return withRetries(
      client.retry,
      () => uploadOnce(client, body, { query, key, gzip, onBytes }),
      client.onRetry,
    );
  }
  const stream = source instanceof Readable ? source : Readable.from(source);
  const body: Body = { open: () => stream, size: null, label: 'the upload stream' };
  const result = await uploadOnce(client, body, {
    query,
    key: options.idempotencyKey ?? randomUUID(),
    gzip,
    onBytes,
  });
  if (result.ok) return result.value;
  throw result.error;
}
