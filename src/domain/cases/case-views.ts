import type { Case, CaseTriage } from './case.js';
import type { CaseDetail, Evidence, StatusChange } from './case-store.js';
import type { StoredFinding } from './finding-store.js';

/**
 * The public JSON of cases and findings (`api/schemas/scans-responses.ts`), from the domain types
 * the stores return: the one view of a case shared by the list, the detail and the exports (a
 * JSON Lines case is {@link viewCaseRecord}, a JSON Lines finding is its API view too).
 */

/** A case's current triage as the API shows it (a triage answer's fields plus `policyVersion`), or null. */
export function viewTriage(t: CaseTriage | null) {
  if (t === null) return null;
  return {
    priority: t.priority,
    recommendedAction: t.recommendedAction,
    reasoning: t.reasoning,
    confidenceScore: t.confidenceScore,
    severityOverride: t.severityOverride,
    model: t.model,
    triagedAt: t.triagedAt,
    policyVersion: t.policyVersion,
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

/**
 * A case as a JSON Lines export writes it (docs/exports.md): the fields of `GET /api/v1/cases/:id`
 * without evidence and history, plus what an export adds (the newest sighting's CVSS vector and
 * location). Its key order is the order of a JSON Lines line.
 */
export function viewCaseRecord(c: Case) {
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
    aliases: c.aliases,
    cweIds: c.cweIds,
    cvssScore: c.cvssScore,
    cvssVector: c.cvssVector,
    kev: c.kev,
    epss: c.epss,
    asset: {
      name: c.asset,
      host: c.host,
      ip: c.ip,
      fqdn: c.fqdn,
      component: c.component,
      componentVersion: c.componentVersion,
      purl: c.purl,
      file: c.file,
      line: c.line,
    },
    port: c.port,
    protocol: c.protocol,
    firstSeen: c.firstSeen,
    lastSeen: c.lastSeen,
    firstScanId: c.firstScanId,
    lastScanId: c.lastScanId,
    sightings: c.sightings,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    triage: viewTriage(c.triage),
    triageStale: c.triageStale,
    dueAt: c.dueAt,
    sla: c.sla,
    duplicateOf: c.duplicateOf,
    leadCveId: c.leadCveId,
    assignee: c.assignee,
    tags: c.tags,
    acceptance: c.acceptance,
  };
}

/**
 * A case as the case list and `GET /api/v1/cases/:id` show it: {@link viewCaseRecord} without the
 * newest sighting's fields (the response schema fixes the key order of the JSON).
 */
export function viewCase(c: Case) {
  const { cvssVector: _vector, asset: full, ...rest } = viewCaseRecord(c);
  const { componentVersion: _version, purl: _purl, file: _file, line: _line, ...asset } = full;
  return { ...rest, asset };
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
  return {
    from: h.from,
    to: h.to,
    actor: h.actor,
    reason: h.reason,
    note: h.note,
    at: h.at.toISOString(),
  };
}
