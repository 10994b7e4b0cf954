import type { Db } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { claimExpiredScanFiles } from './scan-store.js';
import type { ScanStorage } from './scan-storage.js';

/** Scans whose files one transaction removes. */
const BATCH = 200;

/**
 * Removes the raw files of completed scans older than their workspace's scan file retention
 * (docs/operations.md#retention) and marks each scan `file_deleted_at`; findings, evidence and
 * cases stay. Safe with many workers at once: each batch claims its scans with SKIP LOCKED, so
 * two runs never take the same scan, and the mark commits only after the files are removed (a
 * failed removal rolls the batch back, and the next run tries again). Returns how many went.
 */
export async function removeExpiredScanFiles(
  deps: { db: Db; storage: ScanStorage },
  now: Date,
): Promise<number> {
  let removed = 0;
  for (;;) {
    const n = await withTransaction(deps.db, async (tx) => {
      const paths = await claimExpiredScanFiles(tx, now, BATCH);
      for (const p of paths) await deps.storage.remove(p);
      return paths.length;
    });
    removed += n;
    if (n < BATCH) return removed;
  }
}
