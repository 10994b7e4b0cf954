import type { Scan } from './scan-store.js';

/**
 * The public JSON of a scan (`api/schemas/scans-responses.ts`), from the domain type its store
 * returns; a case's and a finding's are `domain/cases/case-views.ts`.
 */

/** The public shape of a scan (`GET /api/pipeline/scan/:id`, `GET /api/v1/scans`). */
export function viewScan(s: Scan) {
  const bytes = Number(s.bytes);
  const bytesParsed = Number(s.bytesParsed);
  return {
    object: 'scan' as const,
    id: s.id,
    scanId: s.id,
    name: s.name,
    status: s.status,
    format: s.format,
    bytes,
    bytesParsed,
    progress:
      s.status === 'completed'
        ? 1
        : bytes > 0
          ? Math.min(1, Math.round((bytesParsed / bytes) * 1000) / 1000)
          : 0,
    sha256: s.sha256,
    asset: { ...s.asset },
    counts: {
      findings: s.findingsCount,
      new: s.newCases,
      duplicate: s.duplicates,
      resolved: s.resolvedCases,
      reopened: s.reopenedCases,
      bySeverity: { CRITICAL: 0, HIGH: 0, MEDIUM: 0, LOW: 0, INFO: 0, ...s.bySeverity },
    },
    resolveMissing: s.resolveMissing,
    notes: s.notes,
    error: s.error,
    createdAt: s.createdAt.toISOString(),
    startedAt: s.startedAt?.toISOString() ?? null,
    finishedAt: s.finishedAt?.toISOString() ?? null,
    // The raw file is gone: removed by the workspace's retention, or with a failed scan
    // (docs/operations.md#retention). Findings and cases are kept either way.
    fileDeleted: s.fileDeletedAt !== null || s.status === 'failed',
    fileDeletedAt: s.fileDeletedAt?.toISOString() ?? null,
  };
}
