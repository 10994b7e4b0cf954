import type { Readable } from 'node:stream';
import type { UploadLimits } from '../../lib/config.js';
import { acceptScan, type AcceptScanDeps, type AcceptScanInput } from './accept-scan.js';
import type { Scan } from './scan-store.js';
import { checkFreeSpace, type UploadGate } from './upload-gate.js';

export interface UploadScanDeps extends AcceptScanDeps {
  /** The process's upload places, per workspace and in all: one shared by every upload route. */
  gate: UploadGate;
  /** Free space to keep, gzip expansion, size, idle and whole-body timeouts. */
  limits: UploadLimits;
}

/** A scan's body once a place is held: its bytes, and whether they came gzip-encoded on the wire. */
export interface OpenedUpload {
  body: Readable;
  gzip: boolean;
}

/** An upload as a route hands it over: what it said about the scan, and its body still unread. */
export interface UploadScanInput extends Omit<AcceptScanInput, 'body' | 'gzip' | 'limits'> {
  /** The request's Content-Length, when sent: checked against the free space before a byte is read. */
  declaredBytes: number | null;
  /**
   * Opens the body (the raw stream, or the multipart part holding the file). Called only once a
   * place is held and storage has room; what it throws (no file part, an unknown encoding) is
   * the upload's answer, and the place is given back.
   */
  open(): Promise<OpenedUpload>;
}

/**
 * One scan upload, for every route that takes one (docs/ingestion.md#upload-bounds): a place among the
 * process's uploads (429 past the workspace's share, 503 past the process's), room on the disk
 * (503 when it would fill past the reserve), then {@link acceptScan}: the file stored, the
 * scan recorded, its parse enqueued. Both refusals come before the body is read, so a refused
 * upload costs nothing. The place is held until the scan is accepted or refused, whichever way.
 */
export async function uploadScan(
  deps: UploadScanDeps,
  input: UploadScanInput,
): Promise<{ scan: Scan; replayed: boolean }> {
  const { declaredBytes, open, ...scan } = input;
  const release = deps.gate.enter(scan.workspaceId);
  try {
    checkFreeSpace(await deps.storage.freeBytes(), declaredBytes, deps.limits.minFreeBytes);
    const { body, gzip } = await open();
    return await acceptScan(deps, { ...scan, body, gzip, limits: deps.limits });
  } finally {
    release();
  }
}
