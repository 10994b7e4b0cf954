/**
 * CISA SSVC coordinator/deployer decision tree, version 2.0.3 ("CISA Coordinator", the table
 * CISA's SSVC guide and calculator use), and pure functions deriving its four decision points
 * from the enrichment we hold (docs/triage.md#enrichment: KEV, EPSS, CVSS) and the request's asset context.
 */
import type { AssetCriticality, AssetEnvironment } from './types.js';

/** SSVC decision points and outcome (CISA SSVC 2.0.3 naming, `public_poc` for PoC). */
export type Exploitation = 'none' | 'public_poc' | 'active';
export type Automatable = 'no' | 'yes';
export type TechnicalImpact = 'partial' | 'total';
export type MissionWellbeing = 'low' | 'medium' | 'high';
export type SsvcDecision = 'Track' | 'Track*' | 'Attend' | 'Act';

/** Version of the CISA Coordinator decision table implemented here. */
export const SSVC_TREE_VERSION = '2.0.3';

/** The four decision points of one finding. */
export interface SsvcInputs {
  exploitation: Exploitation;
  automatable: Automatable;
  technicalImpact: TechnicalImpact;
  missionWellbeing: MissionWellbeing;
}

type Row = readonly [Exploitation, Automatable, TechnicalImpact, SsvcDecision, SsvcDecision, SsvcDecision];

/**
 * The 36 rows of CISA Coordinator 2.0.3, folded by mission & well-being: the last three columns
 * are the decisions for low, medium and high. Transcribed row by row from the CISA table; keep
 * the order (none, public_poc, active) x (no, yes) x (partial, total).
 */
const TABLE: readonly Row[] = [
  ['none', 'no', 'partial', 'Track', 'Track', 'Track'],
  ['none', 'no', 'total', 'Track', 'Track', 'Track*'],
  ['none', 'yes', 'partial', 'Track', 'Track', 'Attend'],
  ['none', 'yes', 'total', 'Track', 'Track', 'Attend'],
  ['public_poc', 'no', 'partial', 'Track', 'Track', 'Track*'],
  ['public_poc', 'no', 'total', 'Track', 'Track*', 'Attend'],
  ['public_poc', 'yes', 'partial', 'Track', 'Track', 'Attend'],
  ['public_poc', 'yes', 'total', 'Track', 'Track*', 'Attend'],
  ['active', 'no', 'partial', 'Track', 'Track', 'Attend'],
  ['active', 'no', 'total', 'Track', 'Attend', 'Act'],
  ['active', 'yes', 'partial', 'Attend', 'Attend', 'Act'],
  ['active', 'yes', 'total', 'Attend', 'Act', 'Act'],
];

const MWB_COLUMN: Record<MissionWellbeing, 3 | 4 | 5> = { low: 3, medium: 4, high: 5 };

/** Looks up the CISA SSVC 2.0.3 decision for the four decision points. */
export function ssvcDecide(p: SsvcInputs): SsvcDecision {
  const row = TABLE.find(
    (r) => r[0] === p.exploitation && r[1] === p.automatable && r[2] === p.technicalImpact,
  );
  // The table is total over the union types, so a miss means a caller bypassed the types.
  if (row === undefined) throw new TypeError(`ssvcDecide: invalid inputs ${JSON.stringify(p)}`);
  return row[MWB_COLUMN[p.missionWellbeing]];
}

/** Ordering used by floors: Track < Track* < Attend < Act. */
export const SSVC_RANK: Record<SsvcDecision, number> = { Track: 0, 'Track*': 1, Attend: 2, Act: 3 };

/**
 * EPSS probability at or above which a CVE is treated as `public_poc`. EPSS predicts exploitation
 * in the next 30 days; 0.1 is the same "high exploit-prediction score" threshold the router uses
 * (docs/triage.md#request-and-answer), and scores that high almost always reflect public exploit code.
 */
export const EPSS_POC_THRESHOLD = 0.1;

/** Exploitation: KEV listing is evidence of active exploitation; a high EPSS stands in for a PoC. */
export function deriveExploitation(
  signal: { kev: boolean; maxEpss: number | null },
  epssThreshold = EPSS_POC_THRESHOLD,
): Exploitation {
  if (signal.kev) return 'active';
  if (signal.maxEpss !== null && signal.maxEpss >= epssThreshold) return 'public_poc';
  return 'none';
}

/** Parses `AV:N/AC:L/...` (CVSS v2, v3.x or v4.0, with or without a `CVSS:x.y/` prefix). */
export function parseCvssVector(vector: string | null | undefined): Map<string, string> {
  const metrics = new Map<string, string>();
  if (!vector) return metrics;
  for (const part of vector.replace(/^\(|\)$/g, '').split('/')) {
    const [key, value] = part.split(':');
    if (key && value && key !== 'CVSS') metrics.set(key.trim(), value.trim());
  }
  return metrics;
}

/**
 * Automatable: `yes` when the vector says network-reachable, low complexity, no privileges and no
 * user interaction (v3: AV:N/AC:L/PR:N/UI:N; v4 additionally AT:N; v2: AV:N/AC:L/Au:N), the
 * steps SSVC asks about (reconnaissance to exploitation without a human).
 * Fallback without a usable vector: `yes` only when the base score is >= 9.0, because scores that
 * high are only reachable with network vectors that need no privileges; otherwise `no`.
 */
export function deriveAutomatable(vector: string | null | undefined, score: number | null): Automatable {
  const m = parseCvssVector(vector);
  if (m.has('AV') && m.has('AC')) {
    const network = m.get('AV') === 'N' && m.get('AC') === 'L';
    const v2 = m.has('Au');
    if (v2) return network && m.get('Au') === 'N' ? 'yes' : 'no';
    const noAttackRequirements = !m.has('AT') || m.get('AT') === 'N';
    return network && m.get('PR') === 'N' && m.get('UI') === 'N' && noAttackRequirements ? 'yes' : 'no';
  }
  return score !== null && score >= 9.0 ? 'yes' : 'no';
}

/**
 * Technical impact: `total` when the attacker gets full confidentiality and integrity impact
 * (v3 C:H and I:H, v4 VC:H and VI:H, v2 C:C and I:C), or the base score is >= 9.0; else `partial`.
 */
export function deriveTechnicalImpact(
  vector: string | null | undefined,
  score: number | null,
): TechnicalImpact {
  const m = parseCvssVector(vector);
  const c = m.get('C') ?? m.get('VC');
  const i = m.get('I') ?? m.get('VI');
  const full = (c === 'H' && i === 'H') || (c === 'C' && i === 'C');
  return full || (score !== null && score >= 9.0) ? 'total' : 'partial';
}

const MWB_LEVELS: readonly MissionWellbeing[] = ['low', 'medium', 'high'];

/**
 * Mission & well-being from the asset context. Base by criticality: CRITICAL high, HIGH high in
 * PRODUCTION and medium elsewhere, MEDIUM medium, LOW low; no criticality given: medium (SSVC
 * asks for a reasonable assumption instead of "unknown"). Internet exposure raises one level;
 * DEVELOPMENT or TEST without exposure lowers one level.
 */
export function deriveMissionWellbeing(
  asset:
    | {
        criticality?: AssetCriticality;
        environment?: AssetEnvironment;
        internetExposed?: boolean;
      }
    | undefined,
): MissionWellbeing {
  const criticality = asset?.criticality;
  let level =
    criticality === 'CRITICAL'
      ? 2
      : criticality === 'HIGH'
        ? asset?.environment === 'PRODUCTION'
          ? 2
          : 1
        : criticality === 'LOW'
          ? 0
          : 1;
  const exposed = asset?.internetExposed === true;
  if (exposed) level += 1;
  else if (asset?.environment === 'DEVELOPMENT' || asset?.environment === 'TEST') level -= 1;
  return MWB_LEVELS[Math.max(0, Math.min(2, level))] ?? 'medium';
}
