import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Pool } from '../../db/pool.js';
import { AppError, notFound } from '../../lib/errors.js';
import type { ScanStorage } from '../scans/scan-storage.js';
import type { ListFilters } from '../cases/list-filters.js';
import { viewCaseRecord } from '../cases/case-views.js';
import type { ExportMeta } from './export-case.js';
import {
  completeExport,
  countCases,
  deleteExpiredExports,
  deleteQueuedExport,
  failExport,
  findExport,
  findExportById,
  insertExport,
  iterateExportCases,
  recordExportProgress,
  startExport,
  type ExportRecord,
  type ExportSubject,
} from './export-store.js';
import { iterateFindings, renderFindings, type FindingExportFormat } from './findings-export.js';
import { RENDERERS, type ExportFormat } from './formats.js';
import { checkLink, linkKey, signLink } from './signed-link.js';

/** A streamed export: what the HTTP edge needs to send it. */
export interface ExportStream {
  contentType: string;
  filename: string;
  body: Readable;
}

export interface ExportRequest {
  workspaceId: string;
  keyId: string | null;
  subject: ExportSubject;
  format: ExportFormat;
  filter: ListFilters;
}

export interface ExportService {
  /** Streams a case export now; 413 when the filter selects more than the synchronous limit. */
  streamCases(workspaceId: string, format: ExportFormat, filter: ListFilters): Promise<ExportStream>;
  /** Streams a findings export now (CSV or JSON Lines). */
  streamFindings(workspaceId: string, format: FindingExportFormat, filter: ListFilters): ExportStream;
  /** Records an export job and queues it; the answer is its view. */
  create(req: ExportRequest): Promise<ExportView>;
  get(workspaceId: string, id: string): Promise<ExportView | null>;
  /** The job: renders the export into storage. Idempotent: a finished export is left alone. */
  run(exportId: string): Promise<void>;
  /** Fails an export whose job will not run again. */
  fail(exportId: string, reason: string): Promise<void>;
  /** Opens a finished export through its signed link: 404 when forged or unknown, 410 when expired. */
  download(
    exportId: string,
    link: { expires?: unknown; sig?: unknown },
  ): Promise<ExportStream & { bytes: number }>;
  /** Removes expired exports and their files; returns how many. */
  sweepExpired(): Promise<number>;
}

export interface ExportServiceDeps {
  db: Pool;
  storage: ScanStorage;
  enqueue(exportId: string): Promise<void>;
  pepper: string;
  clock: () => Date;
  /** Above this many cases `GET /api/v1/exports/cases` answers 413 (EXPORT_SYNC_MAX_ROWS). */
  syncMaxRows: number;
  /** How long a finished export and its link live (24 h). */
  ttlMs: number;
  toolVersion: string;
  /** The service's public URL (PUBLIC_BASE_URL): download links and SARIF links back to cases are absolute. */
  baseUrl: string;
}

export type ExportView = ReturnType<typeof viewExport>;

function viewExport(e: ExportRecord, downloadUrl: string | null) {
  return {
    object: 'export' as const,
    id: e.id,
    subject: e.subject,
    format: e.format,
    filter: e.filter,
    status: e.status,
    rowsTotal: e.rowsTotal,
    rowsWritten: e.rowsWritten,
    bytes: e.bytes,
    error: e.error,
    createdAt: e.createdAt.toISOString(),
    finishedAt: e.finishedAt?.toISOString() ?? null,
    expiresAt: e.expiresAt.toISOString(),
    statusUrl: `/api/v1/exports/${e.id}`,
    downloadUrl,
  };
}

const fileName = (subject: ExportSubject, extension: string, at: Date): string =>
  `${subject}-${at.toISOString().slice(0, 19).replace(/[:T]/g, '-')}.${extension}`;

/**
 * Case and finding exports (docs/exports.md): small ones stream straight to the client from keyset
 * pages; large ones run as a job into storage and are fetched through a signed, expiring link.
 */
export function createExportService(deps: ExportServiceDeps): ExportService {
  const key = linkKey(deps.pepper);
  const meta = (): ExportMeta => ({
    toolName: 'vuln-triage-service',
    toolVersion: deps.toolVersion,
    baseUrl: deps.baseUrl,
    generatedAt: deps.clock(),
    serial: randomUUID(),
  });
  const storageKey = (e: ExportRecord): string => `${e.workspaceId}/${e.id}`;

  const downloadUrl = (e: ExportRecord): string | null => {
    if (e.status !== 'completed' || e.expiresAt <= deps.clock()) return null;
    const { expires, sig } = signLink(key, e.id, e.expiresAt);
    return `${deps.baseUrl}/api/exports/${e.id}/download?expires=${expires}&sig=${sig}`;
  };

  return {
    async streamCases(workspaceId, format, filter) {
      const n = await countCases(deps.db, workspaceId, filter, deps.syncMaxRows);
      if (n > deps.syncMaxRows) {
        throw new AppError(
          'payload_too_large',
          `The filter selects more than ${deps.syncMaxRows} cases, the most a direct export streams; ` +
            `create an export job with POST /api/v1/exports and download it when it is done.`,
        );
      }
      const r = RENDERERS[format];
      return {
        contentType: r.contentType,
        filename: fileName('cases', r.extension, deps.clock()),
        body: r.render(iterateExportCases(deps.db, workspaceId, filter), meta(), viewCaseRecord),
      };
    },

    streamFindings(workspaceId, format, filter) {
      const r = RENDERERS[format];
      return {
        contentType: r.contentType,
        filename: fileName('findings', r.extension, deps.clock()),
        body: renderFindings(iterateFindings(deps.db, workspaceId, filter), format),
      };
    },

    async create(req) {
      const e = await insertExport(deps.db, {
        id: randomUUID(),
        workspaceId: req.workspaceId,
        keyId: req.keyId,
        subject: req.subject,
        format: req.format,
        filter: req.filter,
        expiresAt: new Date(deps.clock().getTime() + deps.ttlMs),
      });
      try {
        await deps.enqueue(e.id);
      } catch (err) {
        // Not queued means never run: withdraw the export, so a 503 leaves nothing behind
        // (docs/operations.md#failure-behaviour). A worker already running it means the add reached the queue after all (a
        // timeout after the add): the export was accepted. If the withdrawal itself fails, the
        // record says the export failed rather than stay queued for ever.
        const withdrawn = await deleteQueuedExport(deps.db, e.id).catch(async () => {
          await failExport(deps.db, e.id, 'The export could not be queued; create it again.').catch(
            () => undefined,
          );
          return true;
        });
        if (withdrawn)
          throw new AppError('overloaded', 'The export could not be queued; try again shortly.', {
            headers: { 'Retry-After': '5' },
            cause: err,
          });
      }
      return viewExport(e, null);
    },

    async get(workspaceId, id) {
      const e = await findExport(deps.db, workspaceId, id);
      return e ? viewExport(e, downloadUrl(e)) : null;
    },

    async run(exportId) {
      const found = await findExportById(deps.db, exportId);
      if (!found || found.status === 'completed' || found.status === 'failed') return;
      const total =
        found.subject === 'cases'
          ? await countCases(deps.db, found.workspaceId, found.filter, 2 ** 31 - 2)
          : null;
      const e = await startExport(deps.db, exportId, total ?? 0);
      if (!e) return;
      let rows = 0;
      async function* counted<T>(items: AsyncIterable<T>): AsyncGenerator<T> {
        for await (const item of items) {
          rows++;
          yield item;
        }
      }
      const body =
        e.subject === 'cases'
          ? RENDERERS[e.format].render(
              counted(
                iterateExportCases(deps.db, e.workspaceId, e.filter, (n) =>
                  recordExportProgress(deps.db, e.id, n),
                ),
              ),
              meta(),
              viewCaseRecord,
            )
          : renderFindings(
              counted(iterateFindings(deps.db, e.workspaceId, e.filter)),
              e.format as FindingExportFormat,
            );
      const write = await deps.storage.create(storageKey(e));
      try {
        await pipeline(body, write.stream);
        await write.commit();
      } catch (err) {
        await write.abort();
        throw err;
      }
      const bytes = (await deps.storage.size(storageKey(e))) ?? 0;
      await completeExport(deps.db, e.id, { rowsWritten: rows, bytes, storageKey: storageKey(e) });
    },

    async fail(exportId, reason) {
      await failExport(deps.db, exportId, reason);
    },

    async download(exportId, link) {
      const verdict = checkLink(key, exportId, link, deps.clock());
      if (verdict === 'forged') throw notFound('export');
      if (verdict === 'expired')
        throw new AppError('link_expired', 'This download link has expired; export again.');
      const e = await findExportById(deps.db, exportId);
      if (!e || e.status !== 'completed' || !e.storageKey) throw notFound('export');
      const r = RENDERERS[e.format];
      // Asked before the answer starts, so an unreachable store is a 503 and not a cut-off file.
      if ((await deps.storage.size(e.storageKey)) === null) throw notFound('export');
      return {
        contentType: r.contentType,
        filename: fileName(e.subject, r.extension, e.createdAt),
        body: deps.storage.open(e.storageKey),
        bytes: e.bytes ?? 0,
      };
    },

    async sweepExpired() {
      const keys = await deleteExpiredExports(deps.db, deps.clock());
      await Promise.all(keys.map((k) => deps.storage.remove(k)));
      return keys.length;
    },
  };
}
