import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Pool } from '../../db/pool.js';
import { AppError } from '../../lib/errors.js';
import type { UploadLimits } from '../../lib/config.js';
import { UNSUPPORTED_FORMAT_MESSAGE, detectFormat, type ScanFormat } from '../../parsers/index.js';
import { receiveScan, type ReceivedScan } from './receive-scan.js';
import type { ScanStorage } from './scan-storage.js';
import {
  deleteQueuedScan,
  insertScan,
  scanByIdempotencyKey,
  type AssetContext,
  type Scan,
  type ScanTriageMode,
} from './scan-store.js';

export interface AcceptScanDeps {
  pool: Pool;
  storage: ScanStorage;
  /** Enqueues the parse; must be idempotent per scan id (the job id is the scan id). */
  enqueue(scan: { scanId: string; workspaceId: string }): Promise<void>;
}

export interface AcceptScanInput {
  workspaceId: string;
  keyId: string | null;
  body: Readable;
  gzip: boolean;
  maxBytes: number;
  /** Gzip expansion and size, idle and whole-body timeouts (docs/ingestion.md#upload-bounds). */
  limits?: Pick<UploadLimits, 'gzipMaxRatio' | 'gzipMaxBytes' | 'idleTimeoutMs' | 'bodyTimeoutMs'>;
  format: ScanFormat | null;
  name: string | null;
  asset: AssetContext;
  idempotencyKey: string | null;
  /** Which of its cases to triage once parsed (docs/cases.md#case-triage). @defaultValue `none` */
  triage?: ScanTriageMode;
  /** Resolve the cases of its scope it does not see (docs/ingestion.md#rescans). @defaultValue true */
  resolveMissing?: boolean;
}

/**
 * The upload half of docs/ingestion.md#upload: store the file (streamed, hashed, size-limited, gunzipped
 * when it came compressed), recognise its format, record the scan and enqueue its parse.
 * Every failure path deletes what was written, so storage only ever holds files of scans.
 *
 * Idempotency: the same `Idempotency-Key` with the same bytes returns the first scan (and
 * re-enqueues it if it is still queued, in case the first request died between insert and
 * enqueue); with other bytes it is a 409. An upload whose enqueue fails is withdrawn and
 * answered 503 `overloaded` (see {@link withdraw}). The key is checked after the body is read because
 * the body's hash is what "the same request" means here.
 */
export async function acceptScan(
  deps: AcceptScanDeps,
  input: AcceptScanInput,
): Promise<{ scan: Scan; replayed: boolean }> {
  const scanId = randomUUID();
  const key = `${input.workspaceId}/${scanId}`;
  const write = await deps.storage.create(key);
  let received: ReceivedScan;
  try {
    received = await receiveScan(input.body, write.stream, {
      gzip: input.gzip,
      maxBytes: input.maxBytes,
      ...input.limits,
    });
  } catch (err) {
    await write.abort();
    throw err;
  }
  if (received.bytes === 0) {
    await write.abort();
    throw new AppError('invalid_request', 'The scan file is empty.');
  }
  const format = input.format ?? detectFormat(received.head);
  if (!format) {
    await write.abort();
    throw new AppError('unsupported_format', UNSUPPORTED_FORMAT_MESSAGE);
  }
  await write.commit();

  let scan: Scan | null;
  try {
    scan = await insertScan(deps.pool, {
      id: scanId,
      workspaceId: input.workspaceId,
      keyId: input.keyId,
      name: input.name,
      format,
      bytes: received.bytes,
      sha256: received.sha256,
      storagePath: key,
      contentEncoding: received.gunzipped ? 'gzip' : null,
      idempotencyKey: input.idempotencyKey,
      asset: input.asset,
      triage: input.triage ?? 'none',
      resolveMissing: input.resolveMissing ?? true,
    });
  } catch (err) {
    await deps.storage.remove(key);
    throw err;
  }

  if (!scan) {
    await deps.storage.remove(key);
    const first = await scanByIdempotencyKey(deps.pool, input.workspaceId, input.idempotencyKey!);
    if (!first)
      throw new AppError(
        'conflict',
        'A concurrent upload with the same Idempotency-Key is in progress; retry.',
      );
    if (first.sha256 !== received.sha256) {
      throw new AppError(
        'idempotency_conflict',
        'This Idempotency-Key was already used with a different file.',
      );
    }
    if (first.status === 'queued') {
      // Not ours to withdraw: the first request may still be between its insert and enqueue.
      // If nobody enqueues it, the maintenance sweep fails it (scan-failure.ts).
      await deps.enqueue({ scanId: first.id, workspaceId: first.workspaceId }).catch((err: unknown) => {
        throw notQueued(err, 'The scan is stored but could not be queued for parsing; retry the upload.');
      });
    }
    return { scan: first, replayed: true };
  }
  try {
    await deps.enqueue({ scanId: scan.id, workspaceId: scan.workspaceId });
  } catch (err) {
    await withdraw(deps, scan.id, err);
  }
  return { scan, replayed: false };
}

/** 503 for an upload whose parse could not be queued; the caller may simply retry it. */
function notQueued(
  cause: unknown,
  detail = 'The scan could not be queued for parsing and was not kept; retry the upload.',
): AppError {
  return new AppError('overloaded', detail, { headers: { 'Retry-After': '5' }, cause });
}

/**
 * The enqueue failed after the scan was recorded: withdraw the scan (row and file) and answer
 * 503, so no scan waits in `queued` for a job that does not exist and a retry with the same
 * `Idempotency-Key` starts afresh (a failed upload is not replayed, as with Stripe's 5xx).
 * Returns normally only when a worker has already claimed the scan: the enqueue reached the
 * queue after all (a timeout after the add, say), so the upload was accepted. When the
 * withdrawal itself fails the scan stays `queued` and the maintenance sweep fails it later.
 */
async function withdraw(deps: AcceptScanDeps, scanId: string, enqueueError: unknown): Promise<void> {
  let storagePath: string | null;
  try {
    storagePath = await deleteQueuedScan(deps.pool, scanId);
  } catch {
    throw notQueued(enqueueError);
  }
  if (storagePath === null) return;
  await deps.storage.remove(storagePath).catch(() => undefined);
  throw notQueued(enqueueError);
}
