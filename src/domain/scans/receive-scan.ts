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
}

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

  async function* decode(input: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
    const first = await input.next();
    if (first.done) return;
    const chunk = first.value;
    const rest = (async function* () {
      yield chunk;
      for (;;) {
        const r = await input.next();
        if (r.done) return;
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
    try {
      for await (const out of gunzip as AsyncIterable<Buffer>) yield out;
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
  const input: AsyncIterator<Buffer> = {
    next: () =>
      body.next().catch((err: unknown) => {
        throw err instanceof AppError ? err : uploadInterrupted(err);
      }),
  };
  await pipeline(Readable.from(measure(decode(input))), sink);
  return { bytes, sha256: hash.digest('hex'), head: Buffer.concat(headParts), gunzipped };
}
