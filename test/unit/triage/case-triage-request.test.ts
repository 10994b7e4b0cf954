import { describe, expect, it } from 'vitest';
import type { CaseRisk } from '../../../src/domain/cases/case-candidates.js';
import type { CaseTriageSource } from '../../../src/domain/cases/case-triage-source.js';
import { CASE_DESCRIPTION_MAX, caseTriageRequest } from '../../../src/domain/triage/case-triage-request.js';
import { compareCaseRisk, riskiestFirst } from '../../../src/domain/triage/case-risk.js';

const base: CaseTriageSource = {
  title: 'Apache Log4j RCE',
  severity: 'CRITICAL',
  cveIds: ['CVE-2021-44228'],
  cvssScore: '10.0',
  description: 'JNDI lookups in log messages.',
  cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H',
  asset: '10.0.0.5',
  host: 'web-1',
  ip: '10.0.0.5',
  fqdn: 'web-1.example.com',
  component: null,
  context: null,
};

describe('the triage request of a case', () => {
  it('maps CVEs, title, severity, description, CVSS score and vector, and the host as the asset', () => {
    expect(caseTriageRequest(base)).toEqual({
      cveIds: ['CVE-2021-44228'],
      title: 'Apache Log4j RCE',
      severity: 'CRITICAL',
      description: 'JNDI lookups in log messages.',
      cvssScore: 10,
      cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H',
      asset: { name: 'web-1', type: 'HOST' },
    });
  });

  it('takes the asset name, environment, criticality and exposure from the scan asset context first', () => {
    const r = caseTriageRequest({
      ...base,
      context: { name: 'billing-api', environment: 'PRODUCTION', criticality: 'HIGH', internetExposed: true },
    });
    expect(r.asset).toEqual({
      name: 'billing-api',
      type: 'HOST',
      environment: 'PRODUCTION',
      criticality: 'HIGH',
      internetExposed: true,
    });
  });

  it.each([
    {
      host: null,
      fqdn: 'a.example',
      ip: null,
      component: null,
      asset: null,
      name: 'a.example',
      type: 'HOST',
    },
    { host: null, fqdn: null, ip: '10.1.1.1', component: null, asset: null, name: '10.1.1.1', type: 'HOST' },
    {
      host: null,
      fqdn: null,
      ip: null,
      component: 'pkg:npm/lodash',
      asset: null,
      name: 'pkg:npm/lodash',
      type: 'APPLICATION',
    },
    { host: null, fqdn: null, ip: null, component: null, asset: 'repo-x', name: 'repo-x', type: undefined },
  ])('falls back to host, FQDN, IP, component, then the asset label ($name)', (c) => {
    const r = caseTriageRequest({ ...base, ...c });
    expect(r.asset).toEqual(c.type ? { name: c.name, type: c.type } : { name: c.name });
  });

  it('leaves asset out when the case names none and the scan gave no context', () => {
    const r = caseTriageRequest({ ...base, host: null, ip: null, fqdn: null, asset: null });
    expect(r.asset).toBeUndefined();
  });

  it('upper-cases, deduplicates and filters CVE ids, at most 100', () => {
    const many = Array.from({ length: 150 }, (_, i) => `CVE-2020-${String(10000 + i)}`);
    expect(
      caseTriageRequest({ ...base, cveIds: ['cve-2021-44228', 'CVE-2021-44228', 'bogus'] }).cveIds,
    ).toEqual(['CVE-2021-44228']);
    expect(caseTriageRequest({ ...base, cveIds: many }).cveIds).toHaveLength(100);
  });

  it('describes a case without CVEs or description by its title, so the request stays valid', () => {
    const r = caseTriageRequest({ ...base, cveIds: [], description: '  ' });
    expect(r.cveIds).toEqual([]);
    expect(r.description).toBe('Apache Log4j RCE');
  });

  it('cuts long fields to what a triage request accepts, never splitting a surrogate pair', () => {
    const r = caseTriageRequest({
      ...base,
      title: 'x'.repeat(499) + '😀' + 'y',
      description: 'd'.repeat(CASE_DESCRIPTION_MAX + 10),
      cvssVector: 'v'.repeat(201),
      context: { name: 'n'.repeat(300), environment: 'NOWHERE', criticality: null, internetExposed: null },
    });
    expect(r.title).toBe('x'.repeat(499));
    expect(r.description).toHaveLength(CASE_DESCRIPTION_MAX);
    expect(r.cvssVector).toBeUndefined();
    expect(r.asset).toEqual({ name: 'n'.repeat(200), type: 'HOST' });
  });

  it('drops a CVSS score outside 0–10 and an unknown severity becomes INFO', () => {
    const r = caseTriageRequest({ ...base, cvssScore: null, severity: 'WEIRD' });
    expect(r.cvssScore).toBeUndefined();
    expect(r.severity).toBe('INFO');
  });
});

describe('riskiest first', () => {
  const at = new Date('2026-11-01T00:00:00Z');
  const c = (id: string, p: Partial<CaseRisk>): CaseRisk => ({
    id,
    kev: false,
    epss: null,
    cvss: null,
    severity: 'LOW',
    firstSeen: at,
    ...p,
  });

  it('orders KEV, then EPSS, then CVSS, then severity, then first seen, then id', () => {
    const cases = [
      c('a', { severity: 'CRITICAL' }),
      c('b', { cvss: 5 }),
      c('c', { epss: 0.2 }),
      c('d', { kev: true }),
      c('e', { kev: true, epss: 0.9 }),
      c('f', { epss: 0.2, cvss: 9.8 }),
      c('g', { severity: 'CRITICAL', firstSeen: new Date('2026-10-01T00:00:00Z') }),
      c('h', { severity: 'HIGH' }),
      c('i', { severity: 'CRITICAL' }),
    ];
    expect([...cases].sort(compareCaseRisk).map((x) => x.id)).toEqual([
      'e',
      'd',
      'f',
      'c',
      'b',
      'g',
      'a',
      'i',
      'h',
    ]);
  });

  it('a KEV case outranks any EPSS, CVSS or severity', () => {
    expect(
      compareCaseRisk(
        c('a', { kev: true, severity: 'INFO' }),
        c('b', { epss: 1, cvss: 10, severity: 'CRITICAL' }),
      ),
    ).toBeLessThan(0);
  });

  it.each([
    { room: 0, triage: [], skipped: ['k', 'e', 'x'] },
    { room: 2, triage: ['k', 'e'], skipped: ['x'] },
    { room: 5, triage: ['k', 'e', 'x'], skipped: [] },
    { room: -1, triage: [], skipped: ['k', 'e', 'x'] },
  ])('splits into the $room riskiest and the rest', ({ room, triage, skipped }) => {
    const split = riskiestFirst([c('x', {}), c('e', { epss: 0.5 }), c('k', { kev: true })], room);
    expect(split.triage.map((x) => x.id)).toEqual(triage);
    expect(split.skipped.map((x) => x.id)).toEqual(skipped);
  });
});
