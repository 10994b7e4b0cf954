import { describe, expect, it } from 'vitest';
import {
  SSVC_TREE_VERSION,
  deriveAutomatable,
  deriveExploitation,
  deriveMissionWellbeing,
  deriveTechnicalImpact,
  ssvcDecide,
  type Automatable,
  type Exploitation,
  type MissionWellbeing,
  type SsvcDecision,
  type TechnicalImpact,
} from '../../../src/domain/triage-engine/ssvc.js';

// CISA Coordinator 2.0.3 in CISA's long form (E, A, TI, MWI → decision), one line per row,
// written independently of the folded table in ssvc.ts so a transcription slip shows up.
const CISA_ROWS = `
N N P L T|N N P M T|N N P H T|N N T L T|N N T M T|N N T H T*
N Y P L T|N Y P M T|N Y P H AT|N Y T L T|N Y T M T|N Y T H AT
P N P L T|P N P M T|P N P H T*|P N T L T|P N T M T*|P N T H AT
P Y P L T|P Y P M T|P Y P H AT|P Y T L T|P Y T M T*|P Y T H AT
A N P L T|A N P M T|A N P H AT|A N T L T|A N T M AT|A N T H AC
A Y P L AT|A Y P M AT|A Y P H AC|A Y T L AT|A Y T M AC|A Y T H AC`;

const E: Record<string, Exploitation> = { N: 'none', P: 'public_poc', A: 'active' };
const A: Record<string, Automatable> = { N: 'no', Y: 'yes' };
const TI: Record<string, TechnicalImpact> = { P: 'partial', T: 'total' };
const M: Record<string, MissionWellbeing> = { L: 'low', M: 'medium', H: 'high' };
const D: Record<string, SsvcDecision> = { T: 'Track', 'T*': 'Track*', AT: 'Attend', AC: 'Act' };

const rows = CISA_ROWS.trim()
  .split(/[|\n]/)
  .map((line) => {
    const [e, a, ti, m, d] = line.trim().split(' ') as [string, string, string, string, string];
    return {
      exploitation: E[e]!,
      automatable: A[a]!,
      technicalImpact: TI[ti]!,
      missionWellbeing: M[m]!,
      expected: D[d]!,
    };
  });

describe('ssvcDecide (CISA SSVC 2.0.3)', () => {
  it('covers all 36 distinct rows', () => {
    expect(SSVC_TREE_VERSION).toBe('2.0.3');
    expect(rows).toHaveLength(36);
    expect(
      new Set(rows.map((r) => `${r.exploitation}${r.automatable}${r.technicalImpact}${r.missionWellbeing}`))
        .size,
    ).toBe(36);
  });

  it.each(rows)('$exploitation/$automatable/$technicalImpact/$missionWellbeing → $expected', (row) => {
    const { expected, ...inputs } = row;
    expect(ssvcDecide(inputs)).toBe(expected);
  });
});

describe('deriveExploitation', () => {
  it.each([
    { kev: true, maxEpss: null, expected: 'active' },
    { kev: true, maxEpss: 0.001, expected: 'active' },
    { kev: false, maxEpss: 0.1, expected: 'public_poc' },
    { kev: false, maxEpss: 0.0999, expected: 'none' },
    { kev: false, maxEpss: null, expected: 'none' },
  ])('kev=$kev epss=$maxEpss → $expected', ({ expected, ...signal }) => {
    expect(deriveExploitation(signal)).toBe(expected);
  });
});

describe('deriveAutomatable', () => {
  it.each([
    { vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', score: 9.8, expected: 'yes' },
    { vector: 'CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H', score: 8.8, expected: 'no' },
    { vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N', score: 6.1, expected: 'no' },
    { vector: 'CVSS:3.0/AV:L/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', score: 8.4, expected: 'no' },
    {
      vector: 'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N',
      score: 9.3,
      expected: 'yes',
    },
    { vector: 'CVSS:4.0/AV:N/AC:L/AT:P/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N', score: 8.1, expected: 'no' },
    { vector: 'AV:N/AC:L/Au:N/C:P/I:P/A:P', score: 7.5, expected: 'yes' },
    { vector: 'AV:N/AC:M/Au:N/C:P/I:P/A:P', score: 6.8, expected: 'no' },
    { vector: null, score: 9.0, expected: 'yes' },
    { vector: null, score: 8.9, expected: 'no' },
    { vector: 'garbage', score: null, expected: 'no' },
  ])('$vector ($score) → $expected', ({ vector, score, expected }) => {
    expect(deriveAutomatable(vector, score)).toBe(expected);
  });
});

describe('deriveTechnicalImpact', () => {
  it.each([
    { vector: 'CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:N', score: 8.1, expected: 'total' },
    { vector: 'CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:H/I:N/A:N', score: 6.5, expected: 'partial' },
    {
      vector: 'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:N/SC:N/SI:N/SA:N',
      score: 8.8,
      expected: 'total',
    },
    { vector: 'AV:N/AC:L/Au:N/C:C/I:C/A:C', score: 10, expected: 'total' },
    { vector: null, score: 9.0, expected: 'total' },
    { vector: null, score: 7.0, expected: 'partial' },
    { vector: null, score: null, expected: 'partial' },
  ])('$vector ($score) → $expected', ({ vector, score, expected }) => {
    expect(deriveTechnicalImpact(vector, score)).toBe(expected);
  });
});

describe('deriveMissionWellbeing', () => {
  it.each([
    { asset: undefined, expected: 'medium' },
    { asset: { criticality: 'CRITICAL' as const }, expected: 'high' },
    { asset: { criticality: 'HIGH' as const, environment: 'PRODUCTION' as const }, expected: 'high' },
    { asset: { criticality: 'HIGH' as const, environment: 'STAGING' as const }, expected: 'medium' },
    { asset: { criticality: 'MEDIUM' as const, internetExposed: true }, expected: 'high' },
    { asset: { criticality: 'LOW' as const }, expected: 'low' },
    { asset: { criticality: 'LOW' as const, internetExposed: true }, expected: 'medium' },
    { asset: { criticality: 'MEDIUM' as const, environment: 'TEST' as const }, expected: 'low' },
    { asset: { criticality: 'LOW' as const, environment: 'DEVELOPMENT' as const }, expected: 'low' },
    { asset: { environment: 'DEVELOPMENT' as const, internetExposed: true }, expected: 'high' },
  ])('$asset → $expected', ({ asset, expected }) => {
    expect(deriveMissionWellbeing(asset)).toBe(expected);
  });
});
