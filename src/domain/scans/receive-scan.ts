import { createHash } from 'node:crypto';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pipeline as pipelineCb } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { AppError } from '../../lib/errors.js';
import { DETECT_HEAD_BYTES } from '../../parsers/index.js';

/** What {@link receiveScan} learned while streaming the upload to storage. */
export interface ReceivedScan {
  /** Bytes stored (after decompression). */
  bytes: number;
  /** SHA-256 (hex) of the stored, decompressed bytes: the same file gzipped or not has one hash. */
  sha256: string;
  /** The first {@link DETECT_HEAD_BYTES} bytes, for format detection. */
  head: Buffer;
  /** Whether the body arrived gzip-compressed (Content-Encoding or gzip magic bytes). */
  gunzipped: boolean;
}

export interface ReceiveOptions {
  /** `Content-Encoding: gzip` was sent. Without it, the gzip magic bytes still switch decompression on. */
  gzip: boolean;
  /** Limit on the stored (decompressed) bytes: a gzip bomb is cut off like any other large body. */
  maxBytes: number;
  /** Limit on the decompressed bytes of a gzip body, when lower than `maxBytes`. */
  gzipMaxBytes?: number;
  /**
   * Most a gzip body may expand (decompressed over compressed bytes so far), checked once
   * {@link GZIP_RATIO_SLACK} bytes came out: a bomb is refused after megabytes, not gigabytes.
   */
  gzipMaxRatio?: number;
  /** No body bytes for this long: 408 `request_timeout`. */
  idleTimeoutMs?: number;
  /** The whole body must have arrived within this: 408 `request_timeout`. */
  bodyTimeoutMs?: number;
}

/** Decompressed bytes any gzip body may produce before its expansion ratio is checked. */
export const GZIP_RATIO_SLACK = 8 * 1024 * 1024;

export const tooLarge = (maxBytes: number): AppError =>
  new AppError('payload_too_large', `The scan is larger than your plan allows (${maxBytes} bytes).`);

/**
 * The body stream itself failed: the client went away mid-upload, or a multipart body broke
 * off before its closing boundary. That is the client's doing, not a server error: it is
 * answered 400 (if anyone is still listening) and not logged as an unhandled error.
 */
export const uploadInterrupted = (cause: unknown): AppError =>
  new AppError(
    'invalid_request',
    'The upload ended before the whole body arrived (connection closed or multipart body cut short).',
    { cause },
  );

/** The body stopped arriving (idle) or took longer than allowed; the partial file is deleted. */
export const uploadTimedOut = (what: 'idle' | 'total', ms: number): AppError =>
  new AppError(
    'request_timeout',
    what === 'idle'
      ? `No bytes of the upload arrived for ${ms} ms; the upload was dropped. Send it again.`
      : `The upload took longer than ${ms} ms; the upload was dropped. Send it again, or a smaller file.`,
  );

const gzipBomb = (ratio: number): AppError =>
  new AppError(
    'payload_too_large',
    `The gzip-compressed body expands more than ${ratio} times; send it uncompressed or compressed less.`,
  );

const GZIP_MAGIC = [0x1f, 0x8b];

/**
 * Streams an upload into `sink` without holding it in memory: optional gunzip, a running
 * SHA-256, the byte limit (the upload is cut off the moment it passes), and the head kept for
 * detection. The caller owns `sink` and deletes what was written when this rejects.
 *
 * The source is read with `destroyOnReturn: false`: when we stop early (too large) the request
 * socket stays open long enough for the 413 to reach the client.
 */
export async function receiveScan(
  source: Readable,
  sink: Writable,
  options: ReceiveOptions,
): Promise<ReceivedScan> {
  const hash = createHash('sha256');
  const headParts: Buffer[] = [];
  let headBytes = 0;
  let bytes = 0;
  let gunzipped = false;
  let compressedBytes = 0;
  const ratio = options.gzipMaxRatio ?? Infinity;

  async function* decode(input: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
    const first = await input.next();
    if (first.done) return;
    const chunk = first.value;
    const rest = (async function* () {
      compressedBytes += chunk.length;
      yield chunk;
      for (;;) {
        const r = await input.next();
        if (r.done) return;
        compressedBytes += r.value.length;
        yield r.value;
      }
    })();
    gunzipped = options.gzip || (chunk[0] === GZIP_MAGIC[0] && chunk[1] === GZIP_MAGIC[1]);
    if (!gunzipped) {
      yield* rest;
      return;
    }
    const gunzip = createGunzip();
    pipelineCb(Readable.from(rest), gunzip, () => undefined);
    let out = 0;
    try {
      for await (const piece of gunzip as AsyncIterable<Buffer>) {
        out += piece.length;
        if (out > GZIP_RATIO_SLACK && out > ratio * compressedBytes) throw gzipBomb(ratio);
        yield piece;
      }
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError('invalid_request', 'The gzip-compressed body is corrupt or truncated.', {
        cause: err,
      });
    }
  }

  async function* measure(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of chunks) {
      bytes += chunk.length;
      if (bytes > options.maxBytes) throw tooLarge(options.maxBytes);
      if (gunzipped && options.gzipMaxBytes !== undefined && bytes > options.gzipMaxBytes)
        throw new AppError(
          'payload_too_large',
          `The gzip-compressed body decompresses to more than ${options.gzipMaxBytes} bytes.`,
        );
      hash.update(chunk);
      if (headBytes < DETECT_HEAD_BYTES) {
        const part = chunk.subarray(0, DETECT_HEAD_BYTES - headBytes);
        headParts.push(Buffer.from(part));
        headBytes += part.length;
      }
      yield chunk;
    }
  }

  const body = source.iterator({ destroyOnReturn: false })[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const endBy = options.bodyTimeoutMs === undefined ? Infinity : Date.now() + options.bodyTimeoutMs;
  const input: AsyncIterator<Buffer> = {
    next: () => {
      const next = body.next().catch((err: unknown) => {
        throw err instanceof AppError ? err : uploadInterrupted(err);
      });
      return withTimeouts(next, options.idleTimeoutMs, endBy, options.bodyTimeoutMs);
    },
  };
  await pipeline(Readable.from(measure(decode(input))), sink);
  return { bytes, sha256: hash.digest('hex'), head: Buffer.concat(headParts), gunzipped };
}

/**
 * `next` of the body, refused with 408 when no bytes come for `idleMs` or the body's end time
 * passes (docs/ingestion.md#upload-bounds: a 1-byte-every-2-s upload held a connection, a descriptor and a file
 * for minutes). The abandoned read is left to fail quietly when the connection closes.
 */
function withTimeouts<T>(
  next: Promise<T>,
  idleMs: number | undefined,
  endBy: number,
  totalMs: number | undefined,
): Promise<T> {
  const left = endBy - Date.now();
  if (idleMs === undefined && !Number.isFinite(left)) return next;
  const idle = idleMs ?? Infinity;
  const ms = Math.max(0, Math.min(idle, left));
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    next,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(idle <= left ? uploadTimedOut('idle', idle) : uploadTimedOut('total', totalMs!)),
        ms,
      );
    }),
  ]).finally(() => {
    clearTimeout(timer);
    next.catch(() => undefined);
  });
}
