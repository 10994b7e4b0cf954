import type { FastifyInstance } from 'fastify';
import { notFound } from '../../lib/errors.js';
import type { QueueHandle } from '../../jobs/queue-kit.js';
import type { ScanIngestPayload } from '../../jobs/scan-ingest.js';
import type { ScanStorage } from '../../domain/scans/scan-storage.js';
import type { UploadGate } from '../../domain/scans/upload-gate.js';
import type { Scan } from '../../domain/scans/scan-store.js';
import type { ScanService } from '../../domain/scans/scan-service.js';
import { viewScan } from '../../domain/scans/views.js';
import type { ScanTriageView } from '../../domain/triage/case-batch-store.js';
import { typed } from '../typed-app.js';
import { actorFrom, type Surface } from './surface.js';
import { DEFAULT_LIMIT, idParams, listScansQuery } from '../schemas/scans.js';
import { consoleScansQuery } from '../schemas/console-data.js';
import { scanDeletion, scanList, scanView } from '../schemas/scans-responses.js';
import { consoleScanList, consoleScanView } from '../schemas/console-responses.js';
import { responses } from '../schemas/responses.js';

/**
 * What the scan routes need, built once by `app/services.ts`: the scan service (reads and the
 * upload, bound to the pool, the storage, the upload gate and the `scan-ingest` queue).
 */
export interface ScanRouteDeps extends ScanService {
  /** The triage a scan's upload asked for, as the scan's view shows it. */
  triageView(scan: { id: string; workspaceId: string }): Promise<ScanTriageView | null>;
  storage: ScanStorage;
  /** The `scan-ingest` queue the service enqueues on (the same queue, opened once). */
  queue: QueueHandle<ScanIngestPayload>;
  /** Concurrent uploads of this process, per workspace and in all (read by tests and metrics). */
  uploadGate: UploadGate;
}

type ScanReads = Pick<ScanRouteDeps, 'get' | 'list' | 'triageView' | 'remove'>;

/** A scan with the triage its upload asked for; the console adds the key it was uploaded as. */
export async function viewScanOf(deps: ScanReads, surface: Surface, s: Scan) {
  const view = { ...viewScan(s), triage: await deps.triageView(s) };
  return surface.kind === 'console' ? { ...view, keyId: s.keyId } : view;
}

/**
 * How each surface documents its scans. The console's list shows each scan's triage (its Scans
 * page has no second request to make); the API's list stays one query, its `/scans/:id` has it.
 */
const SCAN_VIEWS = {
  api: { listSummary: 'List scans', query: listScansQuery, list: scanList, one: scanView, listTriage: false },
  console: {
    listSummary: "The workspace's scans, newest first",
    query: consoleScansQuery,
    list: consoleScanList,
    one: consoleScanView,
    listTriage: true,
  },
} as const;

/**
 * The workspace's scans newest first and one scan (docs/ingestion.md#scan-status), and deleting
 * one (docs/ingestion.md#deleting-a-scan; `scans:write`), written once and registered under both
 * surfaces (`scans:read` on the API). Uploads are `scan-upload.ts`.
 */
export function registerScanRoutes(app: FastifyInstance, deps: ScanReads, surface: Surface): void {
  const r = typed(app);
  const view = SCAN_VIEWS[surface.kind];
  const read = surface.needs('scans:read');

  const listSchema = {
    summary: view.listSummary,
    querystring: view.query,
    response: responses({ 200: view.list }, surface.errors),
  };
  r.get('/scans', { config: read, schema: listSchema }, async (req) => {
    const page = await deps.list(surface.workspaceOf(req), {
      ...req.query,
      limit: req.query.limit ?? DEFAULT_LIMIT,
    });
    const data = view.listTriage
      ? await Promise.all(page.data.map((s) => viewScanOf(deps, surface, s)))
      : page.data.map(viewScan);
    return { object: 'list', data, nextCursor: page.nextCursor };
  });

  const scanSchema = {
    summary: 'One scan',
    params: idParams,
    response: responses({ 200: view.one }, [...surface.errors, 404]),
  };
  r.get('/scans/:id', { config: read, schema: scanSchema }, async (req) => {
    const scan = await deps.get(surface.workspaceOf(req), req.params.id);
    if (!scan) throw notFound('scan');
    return viewScanOf(deps, surface, scan);
  });

  const deleteSchema = {
    summary: 'Delete a scan with the cases only it sighted',
    params: idParams,
    response: responses({ 200: scanDeletion }, [...surface.errors, 404, 409]),
  };
  const write = surface.needs('scans:write');
  r.delete('/scans/:id', { config: write, schema: deleteSchema }, async (req) => {
    const actor = actorFrom(req, surface.actorOf(req));
    const gone = await deps.remove(surface.workspaceOf(req), req.params.id, actor);
    if (!gone) throw notFound('scan');
    return { object: 'scan_deletion', ...gone };
  });
}

/** `GET /api/pipeline/scan/:id`: the status URL an upload answers with (API key, `scans:read`). */
export function registerPipelineScanRoute(app: FastifyInstance, deps: ScanReads, surface: Surface): void {
  const schema = {
    summary: 'A scan and its parse progress',
    params: idParams,
    response: responses({ 200: scanView }, [...surface.errors, 404]),
  };
  typed(app).get('/scan/:id', { config: surface.needs('scans:read'), schema }, async (req) => {
    const scan = await deps.get(surface.workspaceOf(req), req.params.id);
    if (!scan) throw notFound('scan');
    return viewScanOf(deps, surface, scan);
  });
}
