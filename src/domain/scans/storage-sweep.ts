import { isUuid } from '../../lib/ids.js';
import type { ScanStorage, StoredEntry } from './scan-storage.js';

/** Options of {@link sweepStorage}. */
export interface StorageSweepDeps {
  storage: ScanStorage;
  /**
   * Which of these ids own a file: a scan row or an export row (exports render into the same
   * storage under `<workspaceId>/<exportId>`). Files of any id it returns are never touched.
   */
  owned(ids: string[]): Promise<Set<string>>;
  /**
   * A `.part` file is dead when its writer stopped writing this long ago (a live upload gets
   * bytes at least every idle timeout, or is dropped) or began longer ago than the longest
   * upload allowed. @defaultValue 15 minutes since the last write, 35 minutes since the start
   */
  partIdleMs?: number;
  partMaxAgeMs?: number;
  /**
   * A committed file with no owner row is removed once it is this old: between the rename and
   * the insert of its row an upload's file has no row yet. @defaultValue 15 minutes
   */
  orphanAfterMs?: number;
}

export interface StorageSweepReport {
  partialsRemoved: number;
  orphansRemoved: number;
}

const BATCH = 500;

/**
 * Keeps scan storage down to files of live scans, live exports and uploads in progress
 * (docs/operations.md#failure-behaviour): a `web` process killed mid-upload leaves its `.part` file, and a process that dies
 * between storing a file and recording its scan (or between deleting a row and its file) leaves
 * a file nothing owns. Owners are looked up by id in both `scans` and `exports`, so an export's
 * file is kept whatever its status. Idempotent; safe to run concurrently with uploads.
 */
export async function sweepStorage(deps: StorageSweepDeps, now: Date): Promise<StorageSweepReport> {
  const partIdleMs = deps.partIdleMs ?? 15 * 60_000;
  const partMaxAgeMs = deps.partMaxAgeMs ?? 35 * 60_000;
  const orphanAfterMs = deps.orphanAfterMs ?? 15 * 60_000;
  const t = now.getTime();
  const report: StorageSweepReport = { partialsRemoved: 0, orphansRemoved: 0 };
  let candidates: StoredEntry[] = [];

  const settle = async () => {
    const ids = [...new Set(candidates.map((e) => e.ownerId!))];
    const owned = await deps.owned(ids);
    for (const e of candidates) {
      if (owned.has(e.ownerId!)) continue;
      await deps.storage.removeEntry(e);
      if (e.partial) report.partialsRemoved++;
      else report.orphansRemoved++;
    }
    candidates = [];
  };

  for await (const entry of deps.storage.entries()) {
    if (entry.partial && t - entry.modifiedAt.getTime() > partIdleMs) {
      await deps.storage.removeEntry(entry);
      report.partialsRemoved++;
      continue;
    }
    if (entry.ownerId === null || !isUuid(entry.ownerId)) continue;
    if (entry.partial) {
      // Still written to, but begun longer ago than any upload may last: a dead upload's file
      // unless an export (whose row exists while it renders, however long) is writing it.
      if (entry.startedAt === null || t - entry.startedAt.getTime() <= partMaxAgeMs) continue;
    } else if (t - entry.modifiedAt.getTime() <= orphanAfterMs) continue;
    candidates.push(entry);
    if (candidates.length >= BATCH) await settle();
  }
  if (candidates.length > 0) await settle();
  return report;
}
