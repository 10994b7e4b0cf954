import { Readable } from 'node:stream';
import type { Case, CaseStatus } from '../cases/case.js';
import { nvdUrl, type ExportMeta } from './export-case.js';

type VexState = 'in_triage' | 'resolved' | 'not_affected' | 'exploitable';
type VexResponse = 'will_not_fix' | 'update' | 'workaround_available';

/**
 * `analysis.state` from the case status (docs/exports.md#formats; CycloneDX 1.6
 * impactAnalysisState). A false positive is `not_affected`: the product is not affected by
 * the vulnerability the scanner named, which is what a VEX consumer acts on.
 */
const STATE: Record<CaseStatus, VexState> = {
  open: 'in_triage',
  in_progress: 'in_triage',
  resolved: 'resolved',
  false_positive: 'not_affected',
  risk_accepted: 'exploitable',
};

interface VexComponent {
  'bom-ref': string;
  type: 'library' | 'device' | 'file';
  name: string;
  version?: string;
  purl?: string;
}

/**
 * The component a case affects: the package for SCA cases, the file for SAST ones, else the
 * host or asset. Null when a case names none (its vulnerability then has no `affects`).
 */
export function affectedComponent(c: Case): VexComponent | null {
  if (c.purl || c.component) {
    const name = c.component ?? c.purl!;
    return {
      'bom-ref': c.purl ?? `component:${name}@${c.componentVersion ?? ''}`,
      type: 'library',
      name,
      ...(c.componentVersion ? { version: c.componentVersion } : {}),
      ...(c.purl ? { purl: c.purl } : {}),
    };
  }
  if (c.file) return { 'bom-ref': `file:${c.file}`, type: 'file', name: c.file };
  const host = c.asset ?? c.host ?? c.fqdn ?? c.ip;
  return host ? { 'bom-ref': `asset:${host}`, type: 'device', name: host } : null;
}

/** The rating method CycloneDX names for a CVSS vector. */
function cvssMethod(vector: string | null): 'CVSSv4' | 'CVSSv31' | 'CVSSv3' | 'CVSSv2' | 'other' {
  if (!vector) return 'other';
  if (vector.startsWith('CVSS:4.0')) return 'CVSSv4';
  if (vector.startsWith('CVSS:3.1')) return 'CVSSv31';
  if (vector.startsWith('CVSS:3.0')) return 'CVSSv3';
  return /^\(?AV:[LAN]/.test(vector) ? 'CVSSv2' : 'other';
}

function cvssSeverity(score: number): string {
  if (score >= 9) return 'critical';
  if (score >= 7) return 'high';
  if (score >= 4) return 'medium';
  if (score > 0) return 'low';
  return 'none';
}

/**
 * `analysis.response`: an accepted risk will not be fixed (whatever its triage advised), a false
 * positive needs no response; otherwise what the triage recommends.
 */
function responses(c: Case): VexResponse[] {
  if (c.status === 'risk_accepted') return ['will_not_fix'];
  if (c.status === 'false_positive') return [];
  const out = new Set<VexResponse>();
  const action = c.triage?.recommendedAction;
  if (action?.startsWith('PATCH_')) out.add('update');
  if (action === 'MITIGATE') out.add('workaround_available');
  return [...out];
}

/**
 * `analysis.detail`: an accepted risk's justification and when the acceptance ends (the case
 * reopens then), else the triage's reasoning.
 */
function detailOf(c: Case): { detail?: string } {
  if (c.acceptance) {
    const why = c.acceptance.note ? `${c.acceptance.note} ` : '';
    return { detail: `${why}(risk accepted until ${c.acceptance.expiresAt})`.trim() };
  }
  return c.triage ? { detail: c.triage.reasoning } : {};
}

function vulnerabilityOf(c: Case, affected: VexComponent | null, meta: ExportMeta): object {
  const [cve, ...otherCves] = c.cveIds;
  const ratings: object[] = [];
  if (c.cvssScore !== null) {
    ratings.push({
      source: cve ? { name: 'NVD', url: nvdUrl(cve) } : { name: c.scanner },
      score: c.cvssScore,
      severity: cvssSeverity(c.cvssScore),
      method: cvssMethod(c.cvssVector),
      ...(c.cvssVector ? { vector: c.cvssVector } : {}),
    });
  }
  if (c.triage) {
    ratings.push({
      source: { name: meta.toolName },
      severity: c.triage.priority.toLowerCase(),
      method: 'other',
      justification: `triage priority (${c.triage.model})`,
    });
  }
  const cwes = c.cweIds.map((w) => Number(/^CWE-(\d+)$/i.exec(w)?.[1])).filter((n) => Number.isInteger(n));
  const response = responses(c);
  return {
    'bom-ref': `case:${c.id}`,
    id: cve ?? (c.ruleId ? `${c.scanner}:${c.ruleId}` : `case:${c.id}`),
    source: cve ? { name: 'NVD', url: nvdUrl(cve) } : { name: c.scanner },
    ...(otherCves.length
      ? { references: otherCves.map((id) => ({ id, source: { name: 'NVD', url: nvdUrl(id) } })) }
      : {}),
    ...(ratings.length ? { ratings } : {}),
    ...(cwes.length ? { cwes } : {}),
    description: c.title,
    analysis: {
      state: STATE[c.status],
      ...(response.length ? { response } : {}),
      ...detailOf(c),
      firstIssued: c.firstSeen,
      lastUpdated: c.triage && c.triage.triagedAt > c.lastSeen ? c.triage.triagedAt : c.lastSeen,
    },
    ...(affected ? { affects: [{ ref: affected['bom-ref'] }] } : {}),
    properties: [
      { name: 'vuln-triage:caseId', value: c.id },
      { name: 'vuln-triage:fingerprint', value: c.fingerprint },
      { name: 'vuln-triage:status', value: c.status },
      { name: 'vuln-triage:kev', value: String(c.kev) },
      ...(c.epss !== null ? [{ name: 'vuln-triage:epss', value: String(c.epss) }] : []),
      ...(c.triage ? [{ name: 'vuln-triage:priority', value: c.triage.priority }] : []),
      ...(c.triageStale ? [{ name: 'vuln-triage:triageStale', value: 'true' }] : []),
      ...(c.acceptance ? [{ name: 'vuln-triage:acceptanceExpiresAt', value: c.acceptance.expiresAt }] : []),
      ...(c.assignee ? [{ name: 'vuln-triage:assignee', value: c.assignee }] : []),
      ...c.tags.map((t) => ({ name: 'vuln-triage:tag', value: t })),
    ],
  };
}

/**
 * A CycloneDX 1.6 VEX document (JSON), streamed: vulnerabilities are written as the cases
 * arrive; the components they affect (one per distinct asset, held in memory: assets, not
 * cases) close the document.
 */
export function renderVex(cases: AsyncIterable<Case>, meta: ExportMeta): Readable {
  return Readable.from(vexChunks(cases, meta), { objectMode: false });
}

async function* vexChunks(cases: AsyncIterable<Case>, meta: ExportMeta): AsyncGenerator<string> {
  const components = new Map<string, VexComponent>();
  const head = {
    bomFormat: 'CycloneDX',
    specVersion: '1.6',
    serialNumber: `urn:uuid:${meta.serial}`,
    version: 1,
    metadata: {
      timestamp: meta.generatedAt.toISOString(),
      tools: { components: [{ type: 'application', name: meta.toolName, version: meta.toolVersion }] },
    },
  };
  let buf = JSON.stringify(head).slice(0, -1) + ',"vulnerabilities":[';
  let first = true;
  for await (const c of cases) {
    const affected = affectedComponent(c);
    if (affected && !components.has(affected['bom-ref'])) components.set(affected['bom-ref'], affected);
    buf += (first ? '' : ',') + JSON.stringify(vulnerabilityOf(c, affected, meta));
    first = false;
    if (buf.length >= 65_536) {
      yield buf;
      buf = '';
    }
  }
  yield buf + `],"components":${JSON.stringify([...components.values()])}}`;
}
