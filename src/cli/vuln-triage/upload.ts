import { createReadStream } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { PassThrough, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { CliError, EXIT } from './errors.js';
import { networkError, refusal, type ApiClient, type Query } from './http-client.js';
import { isRetryable, parseRetryAfter, withRetries, type Attempt } from './retry.js';

/** The 202 of `POST /api/pipeline/scan` (docs/ingestion.md#upload). */
export interface ScanAccepted {
  scanId: string;
  status: string;
  statusUrl: string;
}

export interface UploadInput {
  file: string;
  /** The file's size on disk: the upload bar's total, and Content-Length unless gzipped. */
  size: number;
  /** Compress on the fly and send `Content-Encoding: gzip` (chunked: the compressed size is unknown up front). */
  gzip: boolean;
  query: Query;
  idempotencyKey: string;
}

/**
 * How long a failed request socket waits for the answer the server may already have sent: a
 * refusal mid-upload (413 past the limit) closes the connection, and the write error can reach
 * us just before the response does.
 */
const ANSWER_GRACE_MS = 250;

/** Counts the file's bytes as they are read, for the progress bar. */
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

/** One try: streams the file (gzipped on the fly if asked) as the raw body of the upload. */
function uploadOnce(
  client: ApiClient,
  input: UploadInput,
  onBytes: (sent: number) => void,
): Promise<Attempt<ScanAccepted>> {
  const url = client.url('/api/pipeline/scan', input.query);
  const headers = client.headers({
    'content-type': 'application/octet-stream',
    'idempotency-key': input.idempotencyKey,
    ...(input.gzip ? { 'content-encoding': 'gzip' } : { 'content-length': String(input.size) }),
  });
  const request = (url.protocol === 'https:' ? https : http).request(url, { method: 'POST', headers });
  onBytes(0);
  return new Promise((resolve) => {
    let settled = false;
    let answered = false;
    const settle = (a: Attempt<ScanAccepted>) => {
      if (settled) return;
      settled = true;
      resolve(a);
    };
    request.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) =>
        settle({ ok: false, error: networkError(url, err), retryable: true, retryAfterMs: null }),
      );
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          try {
            return settle({ ok: true, value: JSON.parse(body) as ScanAccepted });
          } catch {
            return settle({
              ok: false,
              error: new CliError(
                'The service accepted the upload but its answer is not JSON.',
                EXIT.service,
              ),
              retryable: false,
              retryAfterMs: null,
            });
          }
        }
        const error = refusal(status, res.statusMessage ?? '', body);
        const retryAfter = res.headers['retry-after'];
        settle({
          ok: false,
          error,
          retryable: isRetryable(status, error.problem?.code),
          retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
        });
      });
    });
    let requestFailed = false;
    request.on('error', (err) => {
      requestFailed = true;
      if (answered) return;
      setTimeout(() => {
        if (!answered)
          settle({ ok: false, error: networkError(url, err), retryable: true, retryAfterMs: null });
      }, ANSWER_GRACE_MS);
    });
    const source = createReadStream(input.file);
    // The pipeline destroys the file stream with the request's own error: only a read error is the file's.
    source.on('error', (err) => {
      if (requestFailed) return;
      settle({
        ok: false,
        error: new CliError(`Cannot read ${input.file}: ${err.message}`, EXIT.usage),
        retryable: false,
        retryAfterMs: null,
      });
    });
    // Errors surface through the request's events above; the pipeline's own rejection repeats them.
    pipeline(source, counter(onBytes), input.gzip ? createGzip() : new PassThrough(), request).catch(
      () => undefined,
    );
  });
}

/**
 * Uploads a scan file, again from its first byte after a retryable failure (429, 503, a reset
 * connection): the Idempotency-Key makes a repeat of an upload the server did store the same scan.
 */
export function uploadScanFile(
  client: ApiClient,
  input: UploadInput,
  onBytes: (sent: number) => void,
): Promise<ScanAccepted> {
  return withRetries(
    client.retry,
    () => uploadOnce(client, input, onBytes),
    (info) => client.notifyRetry(info),
  );
}
