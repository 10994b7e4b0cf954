import type { Case, CaseDetail, Evidence, StatusChange } from './case-store.js';
import type { CaseTriage } from './case-triage-store.js';
import type { StoredFinding } from './finding-store.js';
import type { Scan } from './scan-store.js';

/**
 * The public JSON of scans, findings and cases (DECISIONS §8–§10, `api/schemas/scans-responses.ts`),
 * from the domain types the stores return. Shared by the routes and the exports (a JSON Lines
 * finding is its API view).
 */

/** A case's current triage as the API shows it (DECISIONS §6 fields plus `policyVersion`), or null. */
export function viewTriage(t: CaseTriage | null) {
  if (t === null) return null;
  return {
    priority: t.priority,
    recommendedAction: t.recommendedAction,
    reasoning: t.reasoning,
    confidenceScore: t.confidenceScore,
    severityOverride: t.severityOverride,
    model: t.model,
    triagedAt: t.triagedAt.toISOString(),
    policyVersion: t.policyVersion,
  };
}

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
      bySeverity: { CRITICAL: 0, HIGH: 0, MEDIUM: 0, LOW: 0, INFO: 0, ...s.bySeverity },
    },
    notes: s.notes,
    error: s.error,
    createdAt: s.createdAt.toISOString(),
    startedAt: s.startedAt?.toISOString() ?? null,
    finishedAt: s.finishedAt?.toISOString() ?? null,
  };
}

export function viewFinding(f: StoredFinding) {
  return {
    object: 'finding' as const,
    id: f.id,
    scanId: f.scanId,
    caseId: f.caseId,
    recordIndex: f.recordIndex,
    fingerprint: f.fingerprint,
    scanner: f.scanner,
    ruleId: f.ruleId,
    title: f.title,
    severity: f.severity,
    cveIds: f.cveIds,
    cweIds: f.cweIds,
    cvssScore: f.cvssScore,
    cvssVector: f.cvssVector,
    kev: f.kev,
    description: f.description,
    solution: f.solution,
    asset: { ...f.asset },
    port: f.port,
    protocol: f.protocol,
    exploitAvailable: f.exploitAvailable,
    confidence: f.confidence,
    suppressed: f.suppressed,
    triage: viewTriage(f.triage),
    triageStale: f.triageStale,
    createdAt: f.createdAt.toISOString(),
  };
}

export function viewCase(c: Case) {
  return {
    object: 'case' as const,
    id: c.id,
    fingerprint: c.fingerprint,
    title: c.title,
    severity: c.severity,
    status: c.status,
    scanner: c.scanner,
    ruleId: c.ruleId,
    cveIds: c.cveIds,
    cweIds: c.cweIds,
    cvssScore: c.cvssScore,
    kev: c.kev,
    epss: c.epss,
    asset: { ...c.asset },
    port: c.port,
    protocol: c.protocol,
    firstSeen: c.firstSeen.toISOString(),
    lastSeen: c.lastSeen.toISOString(),
    firstScanId: c.firstScanId,
    lastScanId: c.lastScanId,
    sightings: c.sightings,
    triage: viewTriage(c.triage),
    triageStale: c.triageStale,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

/**
 * A case as `GET /api/v1/cases/:id` shows it: the case with its current triage, its newest
 * sightings, its status history and the newest page of its triage history.
 */
export function viewCaseDetail(c: Case, detail: CaseDetail) {
  return {
    ...viewCase(c),
    evidence: detail.evidence.data.map(viewEvidence),
    evidenceNextCursor: detail.evidence.nextCursor,
    history: detail.history.map(viewStatusChange),
    triageHistory: detail.triageHistory.data,
    triageHistoryNextCursor: detail.triageHistory.nextCursor,
  };
}

export function viewEvidence(e: Evidence) {
  return {
    id: e.id,
    scanId: e.scanId,
    findingId: e.findingId,
    rawExcerpt: e.rawExcerpt,
    scannerOutput: e.scannerOutput,
    seenAt: e.seenAt.toISOString(),
  };
}

function viewStatusChange(h: StatusChange) {
  return { from: h.from, to: h.to, actor: h.actor, note: h.note, at: h.at.toISOString() };
}
