import { setTimeout as sleep } from 'node:timers/promises';
import { unwrap, type VulnTriageClient } from './client.js';
import { VulnTriageError } from './errors.js';
import type { paths } from './generated/openapi.js';

/** `GET /api/pipeline/scan/:id`: a scan and its parse progress (docs/ingestion.md#scan-status). */
export type ScanStatus =
  paths['/api/pipeline/scan/{id}']['get']['responses'][200]['content']['application/json'];
/** `GET /api/v1/triage/batch/:id`: a batch and one page of its items (docs/triage.md#batch-triage). */
export type BatchStatus =
  paths['/api/v1/triage/batch/{id}']['get']['responses'][200]['content']['application/json'];

/** Failed, or completed with the triage it asked for finished too (a summary by priority needs it). */
export const isScanFinished = (s: Pick<ScanStatus, 'status' | 'triage'>): boolean =>
  s.status === 'failed' ||
  (s.status === 'completed' &&
    !(s.triage && (s.triage.status === 'pending' || s.triage.status === 'running')));

/** A batch no longer queued or running. */
export const isBatchFinished = (b: Pick<BatchStatus, 'status'>): boolean =>
  b.status !== 'queued' && b.status !== 'running';

export interface WaitOptions<T> {
  /** Between polls. @defaultValue 1000 */
  pollMs?: number;
  /** Give up (a {@link VulnTriageError} with status 0) after this long; the work goes on on the server. @defaultValue 3600000 */
  timeoutMs?: number;
  /** Told every status read, the last one included (for a progress bar). */
  onStatus?: (status: T) => void;
  signal?: AbortSignal;
}

async function poll<T extends { status: string }>(
  what: string,
  read: () => Promise<T>,
  finished: (t: T) => boolean,
  opts: WaitOptions<T>,
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 3_600_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    opts.signal?.throwIfAborted();
    const status = await read();
    opts.onStatus?.(status);
    if (finished(status)) return status;
    if (Date.now() > deadline) {
      throw new VulnTriageError(
        `${what} is still ${status.status} after ${Math.round(timeoutMs / 1000)} s; stopped waiting (it goes on on the server).`,
        { kind: 'timeout', status: 0 },
      );
    }
    await sleep(opts.pollMs ?? 1000, undefined, opts.signal ? { signal: opts.signal } : undefined);
  }
}

/**
 * Polls a scan until it is completed or failed (and, when its upload asked for triage, until
 * that triage has finished too). A failed scan is an answer, not an error: read its `error`.
 */
export function waitForScan(
  client: VulnTriageClient,
  scanId: string,
  opts: WaitOptions<ScanStatus> = {},
): Promise<ScanStatus> {
  return poll(
    `Scan ${scanId}`,
    async () => unwrap(await client.GET('/api/pipeline/scan/{id}', { params: { path: { id: scanId } } })),
    isScanFinished,
    opts,
  );
}

/** Polls a triage batch until it is completed, partial or failed (its first page of items with it). */
export function waitForBatch(
  client: VulnTriageClient,
  batchId: string,
  opts: WaitOptions<BatchStatus> = {},
): Promise<BatchStatus> {
  return poll(
    `Batch ${batchId}`,
    async () => unwrap(await client.GET('/api/v1/triage/batch/{id}', { params: { path: { id: batchId } } })),
    isBatchFinished,
    opts,
  );
}
