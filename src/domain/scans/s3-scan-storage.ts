import type { Readable } from 'node:stream';
import { PassThrough } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { AppError } from '../../lib/errors.js';
import type { ScanStorage, StoredEntry } from './scan-storage.js';
import { writeParts } from './s3-part-writer.js';

/** Where the S3 driver keeps its objects: a bucket and an optional key prefix (`S3_PREFIX`). */
export interface S3Location {
  bucket: string;
  /** Prepended to every object key, so deployments (or test files) can share a bucket. */
  prefix: string;
}

/** Seconds a client is told to wait when object storage failed (Retry-After). */
const RETRY_AFTER_S = '5';
/** How writes are cut into multipart parts; benches vary it, the service uses the defaults. */
export interface S3WriteTuning {
  /**
   * Bytes a part: S3's minimum is 5 MiB, and 10,000 parts cap an object at 10,000 × this.
   * @defaultValue 8 MiB
   */
  partSize?: number;
  /** Parts uploaded at once; each is held in memory until it is sent. @defaultValue 2 */
  queueSize?: number;
}

/**
 * Multipart parts of 8 MiB, two in flight and one being filled: a write holds 24 MiB of a file
 * in memory whatever its size, in buffers it reuses (`s3-part-writer.ts`).
 */
const PART_SIZE = 8 * 1024 * 1024;
const QUEUE_SIZE = 2;

const KEY = /^[0-9a-f-]{36}\/[0-9a-f-]{36}$/;
/** `<workspaceId>/<id>.scan`, below the prefix. */
const OBJECT_NAME = /^([0-9a-f-]{36})\/([0-9a-f-]{36})\.scan$/;

/**
 * 503 `overloaded` for a failed call to object storage: an outage or a slow server is the
 * service's dependency failing, never the caller's error (docs/deploy.md#object-storage).
 */
export function storageUnavailable(cause: unknown): AppError {
  if (cause instanceof AppError) return cause;
  return new AppError('overloaded', 'Scan storage is unavailable; retry shortly.', {
    headers: { 'Retry-After': RETRY_AFTER_S },
    cause,
  });
}

function notFoundStatus(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
}

/**
 * {@link ScanStorage} on S3-compatible object storage (`S3_BUCKET`), shared by every `web` and
 * `worker` process on any machine (docs/deploy.md). Writes stream into a multipart upload, so
 * no process holds or spools a whole file; the object appears when the upload completes, and
 * {@link StorageWrite.abort} removes it (or aborts the multipart upload) again. S3 has no rename:
 * a reader finds an object only through the row that names it, which is written after
 * `commit`, so "invisible until commit" holds at the level that matters. Multipart uploads of a
 * process that died are listed by {@link ScanStorage.entries} as partial entries and aborted by
 * the storage sweep, since many S3 servers have no lifecycle rules.
 */
export function createS3ScanStorage(
  client: S3Client,
  where: S3Location,
  tuning: S3WriteTuning = {},
): ScanStorage {
  const prefix = where.prefix === '' || where.prefix.endsWith('/') ? where.prefix : `${where.prefix}/`;
  const Bucket = where.bucket;
  const objectOf = (key: string): string => {
    if (!KEY.test(key)) throw new Error('invalid storage key');
    return `${prefix}${key}.scan`;
  };

  async function* partials(under: string): AsyncGenerator<StoredEntry> {
    let KeyMarker: string | undefined;
    let UploadIdMarker: string | undefined;
    do {
      const page = await client.send(
        new ListMultipartUploadsCommand({ Bucket, Prefix: under, KeyMarker, UploadIdMarker }),
      );
      for (const u of page.Uploads ?? []) {
        if (!u.Key || !u.UploadId) continue;
        const m = OBJECT_NAME.exec(u.Key.slice(prefix.length));
        const started = u.Initiated ?? new Date(0);
        // The newest part tells whether the writer is still alive; an upload lists its parts.
        const parts = await client
          .send(new ListPartsCommand({ Bucket, Key: u.Key, UploadId: u.UploadId }))
          .catch(() => null);
        let modifiedAt = started;
        for (const p of parts?.Parts ?? [])
          if (p.LastModified && p.LastModified > modifiedAt) modifiedAt = p.LastModified;
        yield {
          name: `upload:${u.UploadId}:${u.Key}`,
          key: m ? `${m[1]}/${m[2]}` : null,
          ownerId: m ? m[2]! : null,
          partial: true,
          modifiedAt,
          startedAt: started,
        };
      }
      KeyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
      UploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
    } while (KeyMarker !== undefined);
  }

  return {
    async create(key) {
      const Key = objectOf(key);
      const upload = writeParts(client, {
        Bucket,
        Key,
        partSize: tuning.partSize ?? PART_SIZE,
        queueSize: tuning.queueSize ?? QUEUE_SIZE,
        mapError: storageUnavailable,
      });
      const { stream } = upload;
      let failed: unknown = null;
      // A failed upload stops reading: the writer must hear of it, or it would wait on
      // backpressure for ever.
      const done = upload.done.then(
        () => undefined,
        (err: unknown) => {
          failed = err;
          if (!stream.destroyed) stream.destroy(storageUnavailable(err));
        },
      );
      let ended = false;
      return {
        stream,
        async commit() {
          await done;
          if (failed !== null) throw storageUnavailable(failed);
          ended = true;
        },
        async abort() {
          if (!stream.destroyed) stream.destroy();
          await upload.abort().catch(() => undefined);
          await done;
          // The SDK may have begun a multipart upload it has not aborted (its create was still in
          // flight), and a small body is sent as one PUT when its stream ends: remove both.
          const open = await client
            .send(new ListMultipartUploadsCommand({ Bucket, Prefix: Key }))
            .catch(() => null);
          for (const u of open?.Uploads ?? [])
            if (u.Key === Key && u.UploadId)
              await client
                .send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: u.UploadId }))
                .catch(() => undefined);
          if (!ended) await client.send(new DeleteObjectCommand({ Bucket, Key })).catch(() => undefined);
        },
      };
    },
    open(key) {
      const out = new PassThrough();
      client
        .send(new GetObjectCommand({ Bucket, Key: objectOf(key) }))
        .then((res) => {
          const body = res.Body as Readable | undefined;
          if (!body) throw new Error('object storage returned no body');
          body.on('error', (err) => out.destroy(storageUnavailable(err)));
          body.pipe(out);
        })
        .catch((err: unknown) =>
          out.destroy(
            notFoundStatus(err)
              ? Object.assign(new Error('no such stored file'), { code: 'ENOENT' })
              : storageUnavailable(err),
          ),
        );
      return out;
    },
    async size(key) {
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket, Key: objectOf(key) }));
        return head.ContentLength ?? null;
      } catch (err) {
        if (notFoundStatus(err)) return null;
        throw storageUnavailable(err);
      }
    },
    async remove(key) {
      try {
        await client.send(new DeleteObjectCommand({ Bucket, Key: objectOf(key) }));
      } catch (err) {
        if (!notFoundStatus(err)) throw storageUnavailable(err);
      }
    },
    // Object storage has no free-space figure: the upload's own limits bound it.
    freeBytes: () => Promise.resolve(null),
    async *entries(workspaceId) {
      if (workspaceId !== undefined && !/^[0-9a-f-]{36}$/.test(workspaceId))
        throw new Error('invalid workspace id');
      const under = workspaceId === undefined ? prefix : `${prefix}${workspaceId}/`;
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket, Prefix: under, ContinuationToken }),
        );
        for (const o of page.Contents ?? []) {
          const m = o.Key ? OBJECT_NAME.exec(o.Key.slice(prefix.length)) : null;
          if (!m) continue;
          yield {
            name: o.Key!,
            key: `${m[1]}/${m[2]}`,
            ownerId: m[2]!,
            partial: false,
            modifiedAt: o.LastModified ?? new Date(0),
            startedAt: null,
          };
        }
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken !== undefined);
      yield* partials(under);
    },
    async removeEntry(entry) {
      if (entry.name.startsWith('upload:')) {
        const rest = entry.name.slice('upload:'.length);
        const colon = rest.indexOf(':');
        const UploadId = rest.slice(0, colon);
        const Key = rest.slice(colon + 1);
        if (!Key.startsWith(prefix)) throw new Error('invalid storage entry');
        await client
          .send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }))
          .catch((err: unknown) => {
            if (!notFoundStatus(err)) throw storageUnavailable(err);
          });
        return;
      }
      if (!entry.name.startsWith(prefix) || !OBJECT_NAME.test(entry.name.slice(prefix.length)))
        throw new Error('invalid storage entry');
      await client.send(new DeleteObjectCommand({ Bucket, Key: entry.name })).catch((err: unknown) => {
        if (!notFoundStatus(err)) throw storageUnavailable(err);
      });
    },
  };
}
