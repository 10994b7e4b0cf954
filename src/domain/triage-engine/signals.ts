/**
 * Risk signals of one request: its own fields merged with the enrichment of its CVEs
 * (docs/triage.md#safety-policy). Shared by the router (is it high-risk?), the safety policy (floors) and the
 * local engine, so all three see the same facts.
 */
import type { CveEnrichment } from '../enrichment/types.js';
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
  const ssvc: SsvcInputs = {
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
  };
}
