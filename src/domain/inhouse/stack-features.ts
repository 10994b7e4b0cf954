import { parseCvssVector, TEXT_LIMIT } from './features.js';
import type { FeatureInput } from './features.js';

/**
 * Dense features of the stacked trees stage (src/domain/inhouse/README.md#model): the text heads'
 * probabilities plus what trees can split on directly. Unknown values are -1. Changing what a
 * position means requires a new `STACK_FEATURE_SCHEMA`.
 */
export const STACK_FEATURE_SCHEMA = 'inhouse-stack-features/1';

export const STACK_FEATURES = [
  'p:exploitation:public_poc',
  'p:exploitation:active',
  'p:automatable:yes',
  'p:technicalImpact:total',
  'kev',
  'cvss:score',
  'cvss:version',
  'cvss:AV',
  'cvss:AC',
  'cvss:AT',
  'cvss:PR',
  'cvss:UI',
  'cvss:S',
  'cvss:C',
  'cvss:I',
  'cvss:A',
  'cve:year',
  'cve:number',
  'text:length',
] as const;

/** The text heads' probabilities the stage stacks on. */
export interface HeadProbabilities {
  poc: number;
  active: number;
  automatable: number;
  total: number;
}

const ORDINAL: Record<string, Record<string, number>> = {
  AV: { N: 3, A: 2, L: 1, P: 0 },
  AC: { L: 1, H: 0 },
  AT: { N: 1, P: 0 },
  PR: { N: 2, L: 1, H: 0 },
  UI: { N: 1, R: 0, P: 0, A: 0 },
  S: { C: 1, U: 0 },
  CIA: { H: 2, L: 1, N: 0 },
};

function ordinal(table: string, value: string | undefined): number {
  return value === undefined ? -1 : (ORDINAL[table]?.[value] ?? -1);
}

function cveParts(cve: string | null | undefined): [number, number] {
  const m = cve ? /^CVE-(\d{4})-(\d+)$/.exec(cve) : null;
  return m ? [Number(m[1]), Number(m[2])] : [-1, -1];
}

export function stackFeatures(
  input: FeatureInput,
  p: HeadProbabilities,
  parsed: ReturnType<typeof parseCvssVector> = parseCvssVector(input.cvssVector),
): number[] {
  const m = parsed?.metrics ?? {};
  const v4 = parsed?.version === 'v4';
  const score = input.cvssScore;
  const [year, number] = cveParts(input.cve);
  return [
    p.poc,
    p.active,
    p.automatable,
    p.total,
    input.kev ? 1 : 0,
    score === null || !Number.isFinite(score) ? -1 : Math.min(10, Math.max(0, score)),
    parsed === null ? 0 : v4 ? 4 : 3,
    ordinal('AV', m.AV),
    ordinal('AC', m.AC),
    ordinal('AT', m.AT),
    ordinal('PR', m.PR),
    ordinal('UI', m.UI),
    ordinal('S', m.S),
    ordinal('CIA', v4 ? m.VC : m.C),
    ordinal('CIA', v4 ? m.VI : m.I),
    ordinal('CIA', v4 ? m.VA : m.A),
    year,
    number,
    Math.min(input.text.length, TEXT_LIMIT),
  ];
}
