import { describe, expect, it } from 'vitest';
import { highRiskReasons, isHighRisk } from '../../../src/domain/triage-engine/router.js';
import { enrichment, enrichmentMap } from './enrichment-fixtures.js';
import { CVE, quiet, routineReq } from './router-fixtures.js';

describe('isHighRisk (docs/triage.md#routing)', () => {
  it.each([
    { name: 'quiet CVE', req: routineReq, map: quiet, reasons: [] },
    {
      name: 'KEV with EPSS 0.1',
      req: routineReq,
      map: enrichmentMap(enrichment(CVE, { kev: true, epss: 0.1 })),
      reasons: ['kev_with_epss'],
    },
    {
      name: 'KEV with EPSS 0.09',
      req: routineReq,
      map: enrichmentMap(enrichment(CVE, { kev: true, epss: 0.09 })),
      reasons: [],
    },
    {
      name: 'EPSS 0.9 without KEV',
      req: routineReq,
      map: enrichmentMap(enrichment(CVE, { epss: 0.9 })),
      reasons: [],
    },
    {
      name: 'CRITICAL with stored CVSS 9.8',
      req: { ...routineReq, severity: 'CRITICAL' as const },
      map: enrichmentMap(enrichment(CVE, { cvssScore: 9.8 })),
      reasons: ['critical_with_cvss'],
    },
    {
      name: 'CRITICAL whose own CVSS 8.0 wins over stored 9.8',
      req: { ...routineReq, severity: 'CRITICAL' as const, cvssScore: 8.0 },
      map: enrichmentMap(enrichment(CVE, { cvssScore: 9.8 })),
      reasons: [],
    },
    {
      name: 'CRITICAL with own CVSS 9.0 and no record',
      req: { ...routineReq, severity: 'CRITICAL' as const, cvssScore: 9.0 },
      map: enrichmentMap(),
      reasons: ['critical_with_cvss'],
    },
    {
      name: 'HIGH with CVSS 9.8',
      req: { ...routineReq, severity: 'HIGH' as const, cvssScore: 9.8 },
      map: enrichmentMap(),
      reasons: [],
    },
    {
      name: 'KEV with ransomware use',
      req: routineReq,
      map: enrichmentMap(enrichment(CVE, { kev: true, kevRansomware: true })),
      reasons: ['kev_ransomware'],
    },
  ])('$name → $reasons', ({ req, map, reasons }) => {
    expect(highRiskReasons(req, map)).toEqual(reasons);
    expect(isHighRisk(req, map)).toBe(reasons.length > 0);
  });
});
