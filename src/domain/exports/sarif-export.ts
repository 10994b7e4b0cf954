import { Readable } from 'node:stream';
import type { Case } from '../cases/case.js';
import { caseUrl, effectivePriority, nvdUrl, type ExportMeta } from './export-case.js';

/** SARIF result levels from an urgency (SARIF 2.1.0 §3.27.10). */
const LEVEL = { CRITICAL: 'error', HIGH: 'error', MEDIUM: 'warning', LOW: 'note', INFO: 'note' } as const;

/** SARIF's `security-severity` (0–10) that GitHub code scanning ranks by, from the urgency. */
const SECURITY_SEVERITY = { CRITICAL: '9.5', HIGH: '8.0', MEDIUM: '5.5', LOW: '2.0', INFO: '0.0' } as const;

interface SarifRule {
  id: string;
  name: string;
  shortDescription: { text: string };
  helpUri?: string;
  properties: { tags: string[]; 'security-severity': string };
}

/**
 * The rule a case is reported under: the scanner's own rule when it has one, else its first
 * CVE, else the scanner alone. One rule per distinct id in the run.
 */
export function ruleIdOf(c: Case): string {
  if (c.ruleId) return `${c.scanner}/${c.ruleId}`;
  if (c.cveIds[0]) return c.cveIds[0];
  return `${c.scanner}/finding`;
}

/**
 * One SARIF 2.1.0 log with one run, streamed: the results are written as the cases arrive and
 * the rules (known only once every case is seen) close the run, which JSON's unordered
 * objects allow. Memory holds the rules, never the results.
 */
export function renderSarif(cases: AsyncIterable<Case>, meta: ExportMeta): Readable {
  return Readable.from(sarifChunks(cases, meta), { objectMode: false });
}

async function* sarifChunks(cases: AsyncIterable<Case>, meta: ExportMeta): AsyncGenerator<string> {
  const rules: SarifRule[] = [];
  const ruleIndex = new Map<string, number>();
  let buf =
    '{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","version":"2.1.0","runs":[{"results":[';
  let first = true;
  for await (const c of cases) {
    const id = ruleIdOf(c);
    let index = ruleIndex.get(id);
    if (index === undefined) {
      index = rules.length;
      ruleIndex.set(id, index);
      rules.push(ruleOf(id, c));
    }
    buf += (first ? '' : ',') + JSON.stringify(resultOf(c, id, index, meta));
    first = false;
    if (buf.length >= 65_536) {
      yield buf;
      buf = '';
    }
  }
  const tool = {
    driver: {
      name: meta.toolName,
      version: meta.toolVersion,
      semanticVersion: meta.toolVersion,
      rules,
    },
  };
  const invocation = { executionSuccessful: true, endTimeUtc: meta.generatedAt.toISOString() };
  yield buf + `],"tool":${JSON.stringify(tool)},"invocations":[${JSON.stringify(invocation)}]}]}`;
}

function ruleOf(id: string, c: Case): SarifRule {
  const cve = c.ruleId ? undefined : c.cveIds[0];
  return {
    id,
    name: c.title,
    shortDescription: { text: c.title },
    ...(cve ? { helpUri: nvdUrl(cve) } : {}),
    properties: { tags: ['security', c.scanner], 'security-severity': SECURITY_SEVERITY[c.severity] },
  };
}

function resultOf(c: Case, ruleId: string, ruleIndex: number, meta: ExportMeta): object {
  const priority = effectivePriority(c);
  const where = c.asset ?? c.host ?? c.component;
  const link = caseUrl(meta, c);
  return {
    ruleId,
    ruleIndex,
    level: LEVEL[priority],
    message: { text: where ? `${c.title} on ${where}` : c.title },
    ...(c.file
      ? {
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: c.file },
                ...(c.line && c.line >= 1 ? { region: { startLine: c.line } } : {}),
              },
            },
          ],
        }
      : where
        ? { locations: [{ logicalLocations: [{ fullyQualifiedName: where }] }] }
        : {}),
    partialFingerprints: { 'vulnTriageCase/v1': c.fingerprint },
    ...(link ? { hostedViewerUri: link } : {}),
    properties: {
      caseId: c.id,
      status: c.status,
      severity: c.severity,
      priority,
      'security-severity': SECURITY_SEVERITY[priority],
      cveIds: c.cveIds,
      cweIds: c.cweIds,
      kev: c.kev,
      epss: c.epss,
      cvssScore: c.cvssScore,
      asset: c.asset,
      firstSeen: c.firstSeen,
      lastSeen: c.lastSeen,
      sightings: c.sightings,
      triage: c.triage,
      triageStale: c.triageStale,
      dueAt: c.dueAt,
      sla: c.sla,
    },
  };
}
