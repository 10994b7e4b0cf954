import type { Page } from '../../lib/cursor.js';
import { acceptScan, type AcceptScanDeps, type AcceptScanInput } from './accept-scan.js';
import { getScan, listScans, type Scan, type ScanStatus } from './scan-store.js';

/**
 * Scans as the HTTP edge reads and takes them (DECISIONS §8), bound once to the pool, the
 * storage and the `scan-ingest` producer, so routes never see the pool.
 */
export interface ScanService {
  /** The scan if it exists in this workspace; malformed ids and other workspaces' ids are null alike. */
  get(workspaceId: string, id: string): Promise<Scan | null>;
  /** The workspace's scans, newest first, keyset-paged. */
  list(workspaceId: string, q: { status?: ScanStatus; limit: number; cursor?: string }): Promise<Page<Scan>>;
  /** Stores an upload, records its scan and enqueues its parse ({@link acceptScan}). */
  accept(input: AcceptScanInput): Promise<{ scan: Scan; replayed: boolean }>;
}

/** The scan service: plain delegation to the scan store and {@link acceptScan}. */
export function createScanService(deps: AcceptScanDeps): ScanService {
  return {
    get: (workspaceId, id) => getScan(deps.pool, workspaceId, id),
    list: (workspaceId, q) => listScans(deps.pool, workspaceId, q),
    accept: (input) => acceptScan(deps, input),
  };
}
