import type { ExportCase } from '../../../src/domain/exports/export-case.js';
import type { ExportMeta } from '../../../src/domain/exports/export-case.js';

export const META: ExportMeta = {
  toolName: 'vuln-triage-service',
  toolVersion: '0.1.0',
  baseUrl: 'https://triage.example.test',
  generatedAt: new Date('2026-11-24T10:00:00Z'),
  serial: '3f0c6a5e-52a1-4d5c-9d1e-0c2f4f1d7a11',
};

const base: ExportCase = {
  id: '00000000-0000-4000-8000-000000000001',
  fingerprint: 'fp-1',
  title: 'Apache Log4j2 JNDI RCE',
  severity: 'CRITICAL',
  status: 'open',
  scanner: 'nessus',
  ruleId: '156032',
  cveIds: ['CVE-2021-44228', 'CVE-2021-45046'],
  cweIds: ['CWE-502', 'CWE-20'],
  cvssScore: 10,
  cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H',
  asset: 'web-01',
  host: 'web-01',
  ip: '10.0.0.5',
  fqdn: 'web-01.acme.test',
  component: null,
  componentVersion: null,
  purl: null,
  file: null,
  line: null,
  port: 443,
  protocol: 'tcp',
  kev: true,
  epss: 0.97,
  firstSeen: '2026-11-01T00:00:00.000Z',
  lastSeen: '2026-11-20T00:00:00.000Z',
  sightings: 3,
  triage: {
    priority: 'CRITICAL',
    recommendedAction: 'PATCH_IMMEDIATELY',
    reasoning: 'In CISA KEV; internet exposed. [policy:kev-exposed]',
    confidenceScore: 0.93,
    severityOverride: null,
    model: 'local:ssvc-v1',
    triagedAt: '2026-11-21T00:00:00.000Z',
    policyVersion: '2026-11-01',
  },
  triageStale: false,
};

/** A spread of the shapes cases take: network, SCA, SAST, untriaged, every status, hostile text. */
export const SAMPLE_CASES: ExportCase[] = [
  base,
  {
    ...base,
    id: '00000000-0000-4000-8000-000000000002',
    fingerprint: 'fp-2',
    title: '=HYPERLINK("http://evil.test","click")',
    severity: 'HIGH',
    status: 'risk_accepted',
    scanner: 'cyclonedx',
    ruleId: null,
    cveIds: ['CVE-2022-22965'],
    cweIds: ['CWE-94'],
    cvssVector: 'CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
    cvssScore: 9.8,
    asset: null,
    host: null,
    ip: null,
    fqdn: null,
    component: 'spring-beans',
    componentVersion: '5.3.17',
    purl: 'pkg:maven/org.springframework/spring-beans@5.3.17',
    kev: false,
    epss: null,
    triage: { ...base.triage!, priority: 'HIGH', recommendedAction: 'MITIGATE' },
    triageStale: true,
  },
  {
    ...base,
    id: '00000000-0000-4000-8000-000000000003',
    fingerprint: 'fp-3',
    title: 'SQL injection, "quoted", with\nnewline and , comma — ünïcödé',
    severity: 'MEDIUM',
    status: 'in_progress',
    scanner: 'sarif:CodeQL',
    ruleId: 'js/sql-injection',
    cveIds: [],
    cweIds: ['CWE-89'],
    cvssScore: null,
    cvssVector: null,
    asset: 'shop-frontend',
    host: null,
    ip: null,
    fqdn: null,
    file: 'src/db/query.js',
    line: 42,
    kev: false,
    epss: null,
    triage: null,
  },
  {
    ...base,
    id: '00000000-0000-4000-8000-000000000004',
    fingerprint: 'fp-4',
    title: '-2+3 looks like a formula',
    severity: 'LOW',
    status: 'resolved',
    ruleId: null,
    cveIds: [],
    cweIds: [],
    cvssScore: 3.1,
    cvssVector: 'AV:N/AC:H/Au:N/C:P/I:N/A:N',
    asset: null,
    host: '@host',
    triage: null,
  },
  {
    ...base,
    id: '00000000-0000-4000-8000-000000000005',
    fingerprint: 'fp-5',
    title: 'Informational banner',
    severity: 'INFO',
    status: 'false_positive',
    ruleId: '10287',
    cveIds: [],
    cweIds: [],
    cvssScore: null,
    cvssVector: null,
    asset: null,
    host: null,
    ip: null,
    fqdn: null,
    kev: false,
    epss: 0.0004,
    triage: { ...base.triage!, priority: 'INFO', recommendedAction: 'ACCEPT_RISK' },
  },
];

/** `n` cases cycling through the samples with unique ids and fingerprints. */
export function manyCases(n: number): ExportCase[] {
  return Array.from({ length: n }, (_, i) => {
    const s = SAMPLE_CASES[i % SAMPLE_CASES.length]!;
    const hex = (i + 1).toString(16).padStart(12, '0');
    return {
      ...s,
      id: `10000000-0000-4000-8000-${hex}`,
      fingerprint: `fp-many-${i}`,
      asset: s.asset && `${s.asset}-${i % 7}`,
    };
  });
}

export async function* iterate<T>(items: T[]): AsyncGenerator<T> {
  for (const x of items) yield x;
}
