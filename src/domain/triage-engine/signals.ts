/**
 * Risk signals of one request: its own fields merged with the enrichment of its CVEs
 * (docs/triage.md#safety-policy). Shared by the router (is it high-risk?), the safety policy (floors) and the
 * local engine, so all three see the same facts.
 */
import type { CisaSsvc, CveEnrichment } from '../enrichment/types.js';
import {
  deriveAutomatable,
  deriveExploitation,
  deriveMissionWellbeing,
  deriveTechnicalImpact,
  ssvcDecide,
  EPSS_POC_THRESHOLD,
  type SsvcDecision,
  type SsvcInputs,
} from './ssvc.js';
import type { EnrichmentMap, TriageRequest } from './types.js';

/** The facts about one request that routing, policy and the local engine decide on. */
export interface RiskSignals {
  /** Enrichment records found for the request's CVEs (unknown CVEs are absent). */
  records: CveEnrichment[];
  kev: boolean;
  kevRansomware: boolean;
  /** Highest EPSS over the CVEs, `null` when none has one. */
  maxEpss: number | null;
  /** The request's `cvssScore` when given, else the highest stored score (docs/triage.md#request-and-answer). */
  cvssScore: number | null;
  /** The request's `cvssVector` when given, else the vector of the stored score used. */
  cvssVector: string | null;
  internetExposed: boolean;
  ssvc: SsvcInputs;
  decision: SsvcDecision;
  /**
   * CISA's own decision points when CISA scored at least one of the CVEs (the most severe value
   * of each point over them, and the latest scoring time), else null: then `ssvc` was derived.
   */
  cisa: (Omit<CisaSsvc, 'version'> & { version: string; cves: string[] }) | null;
}

/** How an answer cites CISA's decision: `[CISA SSVC 2.0.3, 2024-10-04]` (docs/triage.md#enrichment). */
export function cisaCitation(cisa: NonNullable<RiskSignals['cisa']>): string {
  return `[CISA SSVC ${cisa.version}, ${cisa.scoredAt.toISOString().slice(0, 10)}]`;
}

const EXPLOITATION_RANK = { none: 0, public_poc: 1, active: 2 } as const;

/** The most severe of CISA's decision points over the CVEs it scored, or null when it scored none. */
function cisaDecision(records: readonly CveEnrichment[]): RiskSignals['cisa'] {
  const scored = records.filter((r): r is CveEnrichment & { cisaSsvc: CisaSsvc } => !!r.cisaSsvc);
  if (scored.length === 0) return null;
  const points = scored.map((r) => r.cisaSsvc);
  const worst = points.reduce((a, b) => ({
    ...a,
    exploitation:
      EXPLOITATION_RANK[b.exploitation] > EXPLOITATION_RANK[a.exploitation] ? b.exploitation : a.exploitation,
    automatable: a.automatable === 'yes' || b.automatable === 'yes' ? 'yes' : 'no',
    technicalImpact: a.technicalImpact === 'total' || b.technicalImpact === 'total' ? 'total' : 'partial',
    scoredAt: b.scoredAt > a.scoredAt ? b.scoredAt : a.scoredAt,
  }));
  return { ...worst, cves: scored.map((r) => r.cveId) };
}

/**
 * Derives the signals of a request.
 * @param epssThreshold - EPSS at or above which exploitation counts as `public_poc`.
 */
export function deriveSignals(
  request: TriageRequest,
  enrichment: EnrichmentMap,
  epssThreshold = EPSS_POC_THRESHOLD,
): RiskSignals {
  const records = (request.cveIds ?? [])
    .map((id) => enrichment.get(id))
    .filter((r): r is CveEnrichment => r !== undefined);
  const epssValues = records.map((r) => r.epss).filter((e): e is number => e !== null && Number.isFinite(e));
  const maxEpss = epssValues.length > 0 ? Math.max(...epssValues) : null;

  let stored: CveEnrichment | undefined;
  for (const r of records) {
    if (r.cvssScore !== null && (stored?.cvssScore == null || r.cvssScore > stored.cvssScore)) stored = r;
  }
  const cvssScore = request.cvssScore ?? stored?.cvssScore ?? null;
  const cvssVector =
    request.cvssVector ?? (request.cvssScore === undefined ? (stored?.cvssVector ?? null) : null);

  const kev = records.some((r) => r.kev);
  // CISA's decision points, where CISA scored a CVE, are used as given (docs/triage.md#enrichment);
  // only a KEV listing, which may be newer than CISA's scoring, still makes exploitation active.
  const cisa = cisaDecision(records);
  const ssvc: SsvcInputs = cisa
    ? {
        exploitation: kev ? 'active' : cisa.exploitation,
        automatable: cisa.automatable,
        technicalImpact: cisa.technicalImpact,
        missionWellbeing: deriveMissionWellbeing(request.asset),
      }
    : {
        exploitation: deriveExploitation({ kev, maxEpss }, epssThreshold),
        automatable: deriveAutomatable(cvssVector, cvssScore),
        technicalImpact: deriveTechnicalImpact(cvssVector, cvssScore),
        missionWellbeing: deriveMissionWellbeing(request.asset),
      };
  return {
    records,
    kev,
    kevRansomware: records.some((r) => r.kev && r.kevRansomware),
    maxEpss,
    cvssScore,
    cvssVector,
    internetExposed: request.asset?.internetExposed === true,
    ssvc,
    decision: ssvcDecide(ssvc),
    cisa,
  };
}
