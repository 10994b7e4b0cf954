import { Writable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';

/** Options of {@link writeParts}. */
export interface PartWriterOptions {
  Bucket: string;
  Key: string;
  /** Bytes a part (S3's minimum is 5 MiB, but for the last one). */
  partSize: number;
  /** Parts uploaded at once. */
  queueSize: number;
  /** What the writer's stream fails with when S3 failed (the raw SDK error is its cause). */
  mapError: (err: unknown) => Error;
}

/** A streamed write into one S3 object. */
export interface PartWriter {
  /** Where the bytes go; it fails with `mapError(err)` once S3 failed, so no writer waits for ever. */
  stream: Writable;
  /** Settles once the object exists (after the stream finished), or with the first S3 error. */
  done: Promise<void>;
  /** Stops the requests in flight and aborts the multipart upload, if one was begun. Never throws. */
  abort(): Promise<void>;
}

/**
 * Streams bytes into an S3 object through a multipart upload whose part buffers are allocated
 * once and reused: at most `queueSize` parts in flight and one being filled, so a write of any
 * size holds `(queueSize + 1) × partSize` bytes and leaves no garbage behind. (lib-storage's
 * `Upload` keeps every incoming chunk of a part, then copies them into a new buffer per part:
 * on a long export, V8 let ~64 MiB of such dead buffers pile up before it collected them; see
 * docs/operations.md#memory-of-a-worker.) A body smaller than one part is sent as one PUT when
 * the stream ends. A part's buffer is reused only after its request settled, retries included.
 */
export function writeParts(client: S3Client, o: PartWriterOptions): PartWriter {
  const { Bucket, Key, partSize, queueSize } = o;
  const controller = new AbortController();
  const free: Buffer[] = [];
  const parts: CompletedPart[] = [];
  const inFlight = new Set<Promise<void>>();
  let current: Buffer | null = null;
  let filled = 0;
  let nextPart = 1;
  let uploadId: Promise<string> | null = null;
  let failure: unknown = null;
  let settle!: { resolve(): void; reject(err: unknown): void };
  const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  done.catch(() => undefined); // its owner awaits it; a failure also reaches the stream

  const fail = (err: unknown): void => {
    if (failure !== null) return;
    failure = err;
    settle.reject(err);
    controller.abort();
  };
  const signal = { abortSignal: controller.signal };

  const beginUpload = (): Promise<string> =>
    (uploadId ??= client.send(new CreateMultipartUploadCommand({ Bucket, Key }), signal).then((r) => {
      if (!r.UploadId) throw new Error('object storage returned no upload id');
      return r.UploadId;
    }));

  /** Waits until fewer than `limit` parts are in flight; throws once S3 failed. */
  async function slots(limit: number): Promise<void> {
    while (inFlight.size >= limit) await Promise.race(inFlight);
    if (failure !== null) throw failure;
  }

  async function sendPart(buffer: Buffer, length: number): Promise<void> {
    await slots(queueSize);
    const PartNumber = nextPart++;
    const sent = beginUpload()
      .then((UploadId) =>
        client.send(
          new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body: buffer.subarray(0, length) }),
          signal,
        ),
      )
      .then(
        (r) => void parts.push({ PartNumber, ETag: r.ETag }),
        (err: unknown) => fail(err),
      )
      .finally(() => {
        inFlight.delete(sent);
        free.push(buffer);
      });
    inFlight.add(sent);
  }

  async function take(chunk: Buffer): Promise<void> {
    if (failure !== null) throw failure;
    for (let at = 0; at < chunk.length;) {
      // At most `queueSize` buffers are in flight (sendPart waits), so at most one more exists.
      current ??= free.pop() ?? Buffer.allocUnsafeSlow(partSize);
      const n = chunk.copy(current, filled, at);
      filled += n;
      at += n;
      if (filled === partSize) {
        const full = current;
        current = null;
        filled = 0;
        await sendPart(full, partSize);
      }
    }
  }

  async function finish(): Promise<void> {
    if (uploadId === null) {
      const Body = current?.subarray(0, filled) ?? Buffer.alloc(0);
      await client.send(new PutObjectCommand({ Bucket, Key, Body }), signal);
      return;
    }
    if (filled > 0) await sendPart(current!, filled);
    current = null;
    await slots(1);
    const UploadId = await uploadId;
    parts.sort((a, b) => a.PartNumber! - b.PartNumber!);
    await client.send(
      new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: parts } }),
      signal,
    );
  }

  const stream = new Writable({
    highWaterMark: 1024 * 1024,
    write(chunk: Buffer, _encoding, callback) {
      take(chunk).then(
        () => callback(),
        (err: unknown) => {
          fail(err);
          callback(o.mapError(err));
        },
      );
    },
    final(callback) {
      finish().then(
        () => {
          settle.resolve();
          callback();
        },
        (err: unknown) => {
          fail(err);
          callback(o.mapError(err));
        },
      );
    },
  });

  return {
    stream,
    done,
    async abort() {
      fail(Object.assign(new Error('The write was aborted.'), { name: 'AbortError' }));
      await Promise.allSettled([...inFlight]);
      const id = await uploadId?.catch(() => null);
      if (id)
        await client
          .send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: id }))
          .catch(() => undefined);
    },
  };
}
