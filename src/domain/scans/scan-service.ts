import { deleteScan, type ScanDeletion } from './delete-scan.js';
import type { Actor } from '../keys/key-service.js';
import type { Page } from '../../lib/cursor.js';
import { uploadScan, type UploadScanDeps, type UploadScanInput } from './upload-scan.js';
import type { RecordedDeliveries } from '../workflows/trigger.js';
import { getScan, listScans, type Scan, type ScanStatus } from './scan-store.js';

/**
 * Scans as the HTTP edge reads and takes them (docs/ingestion.md#upload), bound once to the pool, the
 * storage and the `scan-ingest` producer, so routes never see the pool.
 */
export interface ScanService {
  /** The scan if it exists in this workspace; malformed ids and other workspaces' ids are null alike. */
  get(workspaceId: string, id: string): Promise<Scan | null>;
  /** The workspace's scans, newest first, keyset-paged. */
  list(workspaceId: string, q: { status?: ScanStatus; limit: number; cursor?: string }): Promise<Page<Scan>>;
  /** Takes an upload place, checks the free space, stores the file, records its scan and enqueues its parse ({@link uploadScan}). */
  upload(input: UploadScanInput): Promise<{ scan: Scan; replayed: boolean }>;
  /** Deletes a completed or failed scan with the cases only it sighted ({@link deleteScan}); null when none. */
  remove(workspaceId: string, scanId: string, actor: Actor): Promise<ScanDeletion | null>;
}

/** What the scan service runs on. */
export interface ScanServiceDeps extends UploadScanDeps {
  /**
   * Queues the workflow deliveries a deletion recorded (the trigger's `queueRecorded`).
   * @defaultValue none (the maintenance sweep queues them)
   */
  queueDeliveries?: (recorded: RecordedDeliveries) => Promise<unknown>;
}

/** The scan service: plain delegation to the scan store and {@link uploadScan}. */
export function createScanService(deps: ScanServiceDeps): ScanService {
  return {
    get: (workspaceId, id) => getScan(deps.pool, workspaceId, id),
    list: (workspaceId, q) => listScans(deps.pool, workspaceId, q),
    upload: (input) => uploadScan(deps, input),
    remove: async (workspaceId, scanId, actor) => {
      const done = await deleteScan(deps.pool, { workspaceId, scanId, actor });
      if (!done) return null;
      await deps.queueDeliveries?.(done.deliveries);
      return done.deletion;
    },
  };
}
