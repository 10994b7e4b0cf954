import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { detectFormat, parseScan } from '../../../src/parsers/index.js';
import { fixturePath, parseFixture } from './fixture-paths.js';

/* Field-by-field checks of chosen findings; values read from the files by hand. */

describe('Nessus fields', () => {
  it('maps a ReportItem with CVE, CVSS v2, exploit flag and host properties', async () => {
    const { findings } = await parseFixture('scans/nessus/nessus_v_unknown.xml');
    const f = findings.find((x) => x.asset.host === 'qa3app09' && x.ruleId === '18405');
    expect(f).toMatchObject({
      scanner: 'Nessus',
      title: 'Microsoft Windows Remote Desktop Protocol Server Man-in-the-Middle Weakness',
      severity: 'MEDIUM',
      cveIds: ['CVE-2005-1794'],
      cvssScore: 5.1,
      cvssVector: 'CVSS2#AV:N/AC:H/Au:N/C:P/I:P/A:P',
      cvssV3Score: null,
      cvssV2Score: 5.1,
      exploitAvailable: true,
      port: 3389,
      protocol: 'tcp',
      asset: {
        host: 'qa3app09',
        ip: '10.31.112.29',
        fqdn: 'qa3app09',
        os: 'Microsoft Windows Server 2008 R2 Standard Service Pack 1',
      },
    });
    expect(f?.rawExcerpt.startsWith('<ReportItem port="3389"')).toBe(true);
  });

  it('prefers CVSS v3, keeps v2, reads plugin_output as evidence', async () => {
    const { findings } = await parseFixture('scans/nessus/issue_6992.nessus');
    expect(findings[0]).toMatchObject({
      ruleId: '142591',
      title: 'PHP < 7.3.24 Multiple Vulnerabilities',
      severity: 'MEDIUM',
      cvssScore: 7.5,
      cvssVector: 'CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H',
      cvssV2Score: 5,
      cvssV2Vector: 'CVSS2#AV:N/AC:L/Au:N/C:N/I:N/A:P',
      solution: 'Upgrade to PHP version 7.3.24 or later.',
      asset: {
        host: 'testphp.vulnweb.com',
        ip: '44.228.249.3',
        fqdn: 'testphp.vulnweb.com',
        os: 'Linux Kernel 2.6',
      },
      port: 80,
    });
    expect(findings[0]?.evidence).toContain('URL : http://testphp.vulnweb.com/');
  });

  it('reads cwe elements, exploit_available=false, skips Policy and uses the host name as ip without host-ip', async () => {
    const { findings } = await parseFixture('own:nessus-edge.nessus');
    expect(findings).toHaveLength(2);
    expect(findings[0]).toMatchObject({
      severity: 'CRITICAL',
      cveIds: ['CVE-2024-0001', 'CVE-2024-0002'],
      cweIds: ['CWE-79', 'CWE-352'],
      cvssScore: 9.8,
      cvssV3Vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
      cvssV2Score: 10,
      exploitAvailable: false,
      description: 'A critical flaw & more.',
      evidence: 'Version: 1.2.3 <vulnerable>',
      asset: { host: '192.0.2.50', ip: '192.0.2.50', os: 'Debian 12' },
    });
    expect(findings[1]).toMatchObject({
      severity: 'LOW',
      port: null,
      protocol: 'udp',
      exploitAvailable: null,
    });
  });
});

describe('OpenVAS fields', () => {
  it('reads mixed-content host, port/protocol, refs, qod and tags', async () => {
    const { findings } = await parseFixture('scans/openvas/one_vuln.xml');
    expect(findings[0]).toMatchObject({
      scanner: 'OpenVAS',
      ruleId: '1.3.6.1.4.1.25623.1.0.832260',
      title: 'Mozilla Firefox Security Update (mfsa_2023-32_2023-36) - Windows',
      severity: 'CRITICAL',
      cvssScore: 10,
      confidence: 97,
      port: null,
      protocol: 'tcp',
      solution: 'Upgrade to version 117 or later,\nPlease see the references for more information.',
      asset: { host: '10.0.101.2', ip: '10.0.101.2' },
    });
    expect(findings[0]?.evidence).toContain('Installed version: 116.0.3');
  });

  it('handles get_reports_response, <cve> lists, NOCVE and Log results', async () => {
    const { findings } = await parseFixture('own:openvas-legacy.xml');
    expect(findings.map((f) => [f.cveIds, f.severity, f.port, f.asset.fqdn])).toEqual([
      [['CVE-2016-0777', 'CVE-2016-0778'], 'HIGH', 22, 'ssh.example.org'],
      [[], 'LOW', null, null],
      [[], 'INFO', null, null],
    ]);
    expect(findings[0]?.cvssV2Vector).toBe('AV:N/AC:L/Au:N/C:P/I:P/A:P');
  });
});

describe('Qualys fields', () => {
  it('joins asset-report VULN_INFO with the GLOSSARY that follows the hosts', async () => {
    const { findings } = await parseFixture('scans/qualys/Qualys_Sample_Report.xml');
    const f = findings.find((x) => x.ruleId === '38601' && x.asset.ip === '64.41.200.247');
    expect(f).toMatchObject({
      title: 'SSL/TLS use of weak RC4(Arcfour) cipher',
      severity: 'MEDIUM',
      cveIds: ['CVE-2013-2566', 'CVE-2015-2808'],
      port: 3389,
      protocol: 'tcp',
    });
    expect(f?.rawExcerpt).toMatch(/^<VULN_INFO>\s*<QID id="qid_38601">38601<\/QID>/);
    const dns = findings.find((x) => x.ruleId === '6');
    expect(dns).toMatchObject({
      title: 'DNS Host Name',
      severity: 'INFO',
      asset: { fqdn: 'demo13.s02.sjc01.qualys.com' },
    });
    const withCve = findings.find((x) => x.cveIds.includes('CVE-2019-0708'));
    expect(withCve).toMatchObject({ severity: 'CRITICAL', scanner: 'Qualys' });
  });

  it('reads scan-report VULN with CAT port and inline CVEs', async () => {
    const { findings } = await parseFixture('scans/qualys/qualys_infrascan_webgui_multiple.xml');
    const withCves = findings.filter((f) => f.cveIds.length > 0);
    expect(withCves.length).toBeGreaterThan(0);
    expect(findings.every((f) => f.asset.os === 'Ubuntu 11' || f.asset.ip === '10.2.10.2')).toBe(true);
  });

  it('titles host-detection QIDs without a glossary as "Qualys QID n"', async () => {
    const { findings } = await parseFixture('own:qualys-detection.xml');
    expect(findings[0]).toMatchObject({
      ruleId: '91234',
      title: 'Qualys QID 91234',
      severity: 'CRITICAL',
      port: 445,
      protocol: 'tcp',
      evidence: 'SMBv1 enabled',
      asset: {
        host: 'fs01.corp.example',
        ip: '10.0.0.5',
        fqdn: 'fs01.corp.example',
        os: 'Windows Server 2019',
      },
    });
  });
});

describe('SARIF fields', () => {
  it('resolves rules from extensions, security-severity, CWE tags and partial fingerprints across runs', async () => {
    const { findings } = await parseFixture('own:sarif-extensions.sarif');
    expect(findings[0]).toMatchObject({
      scanner: 'CodeQL',
      ruleId: 'js/sql-injection',
      title: 'Database query built from user-controlled sources',
      severity: 'HIGH',
      cweIds: ['CWE-89'],
      asset: { file: 'src/db.js', line: 17 },
      producerFingerprints: { primaryLocationLineHash: 'abc123:1' },
    });
    expect(findings.slice(1).map((f) => [f.scanner, f.severity, f.suppressed])).toEqual([
      ['Semgrep', 'LOW', false],
      ['Semgrep', 'HIGH', false],
      ['Semgrep', 'CRITICAL', false],
    ]);
  });

  it('keeps suppressed results and marks them', async () => {
    const { findings } = await parseFixture('scans/sarif/suppression_test.sarif');
    expect(findings.map((f) => f.suppressed)).toEqual([true, true, true, false, false]);
  });

  it('formats message strings with arguments when a result has no text', async () => {
    const { findings } = await parseFixture('scans/sarif/appendix_k.sarif');
    expect(findings[0]?.evidence).toBe(
      'Variable "ptr" was used without being initialized. It was declared [here](0).',
    );
  });
});

describe('CycloneDX and CLI fields', () => {
  it('resolves affects refs to nested components and reads v3.1 ratings', async () => {
    const { findings, result } = await parseFixture('own:cyclonedx-1.5.json');
    expect(result.notes).toEqual([]);
    expect(findings.map((f) => [f.asset.component, f.asset.componentVersion, f.asset.purl])).toEqual([
      ['semver', '7.3.8', 'pkg:npm/semver@7.3.8'],
      ['lodash', '4.17.20', 'pkg:npm/lodash@4.17.20'],
    ]);
    expect(findings[0]).toMatchObject({
      scanner: 'trivy',
      ruleId: 'GHSA-xxxx-yyyy-zzzz',
      cvssV3Score: 5.3,
      cweIds: ['CWE-1333'],
      solution: 'Upgrade semver to 7.5.2',
    });
  });

  it('reads a CycloneDX 1.6 BOM: tools as components, CVSS v4 beside v3.1, multi-component affects, VEX', async () => {
    expect(detectFormat(readFileSync(fixturePath('own:cyclonedx-1.6.json')))).toBe('cyclonedx');
    const { findings, result } = await parseFixture('own:cyclonedx-1.6.json');
    expect(result).toMatchObject({ format: 'cyclonedx', count: 4, notes: [] });
    expect(
      findings.map((f) => [
        f.title,
        f.ruleId,
        f.severity,
        f.asset.component,
        f.asset.componentVersion,
        f.asset.purl,
      ]),
    ).toEqual([
      [
        'CVE-2024-45296 in path-to-regexp@0.1.7',
        'CVE-2024-45296',
        'HIGH',
        'path-to-regexp',
        '0.1.7',
        'pkg:npm/path-to-regexp@0.1.7',
      ],
      [
        'CVE-2024-47764 in cookie@0.5.0',
        'GHSA-pxg6-pf52-xh8x',
        'LOW',
        'cookie',
        '0.5.0',
        'pkg:npm/cookie@0.5.0',
      ],
      [
        'CVE-2024-47764 in cookie@0.6.0',
        'GHSA-pxg6-pf52-xh8x',
        'LOW',
        'cookie',
        '0.6.0',
        'pkg:npm/cookie@0.6.0',
      ],
      [
        'CVE-2024-43796 in express@4.18.2',
        'CVE-2024-43796',
        'MEDIUM',
        'express',
        '4.18.2',
        'pkg:npm/express@4.18.2',
      ],
    ]);
    // The CVSS v3.1 rating is the v3 score even when a CVSS v4 rating comes first.
    expect(findings[0]).toMatchObject({
      scanner: 'osv-scanner',
      cveIds: ['CVE-2024-45296'],
      cweIds: ['CWE-1333'],
      cvssV3Score: 7.5,
      cvssV3Vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H',
      solution: 'Upgrade path-to-regexp to 0.1.10 or later (express 4.20.0 or later).',
      suppressed: false,
    });
    expect(findings[1]).toMatchObject({ cveIds: ['CVE-2024-47764'], cweIds: ['CWE-74'], cvssScore: null });
    expect(findings[3]).toMatchObject({ cweIds: ['CWE-79'], cvssV3Score: 5, suppressed: true });
  });

  it('keeps a CVSS v4-only rating as the headline score, never as a v3 one', async () => {
    const bom = {
      bomFormat: 'CycloneDX',
      specVersion: '1.6',
      components: [{ 'bom-ref': 'c1', name: 'lib', version: '1.0', purl: 'pkg:npm/lib@1.0' }],
      vulnerabilities: [
        {
          id: 'CVE-2025-0001',
          ratings: [
            {
              method: 'CVSSv4',
              score: 8.7,
              severity: 'high',
              vector: 'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N',
            },
          ],
          affects: [{ ref: 'c1' }],
        },
      ],
    };
    const findings = [];
    for await (const batch of parseScan(Readable.from([Buffer.from(JSON.stringify(bom))])))
      findings.push(...batch);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      severity: 'HIGH',
      cvssScore: 8.7,
      cvssVector: 'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N',
      cvssV3Score: null,
      cvssV3Vector: null,
    });
  });

  it('marks VEX not_affected as suppressed and reads the 1.x extension score', async () => {
    const json = await parseFixture('scans/cyclonedx/valid-vulnerability-1.4.json');
    expect(json.findings[0]).toMatchObject({
      suppressed: true,
      cvssV3Score: 9.8,
      cweIds: ['CWE-184', 'CWE-502'],
    });
    const ext = await parseFixture('scans/cyclonedx/spec1.xml');
    expect(ext.findings[0]).toMatchObject({
      cvssV3Score: 9.8,
      asset: { component: 'jackson-databind', componentVersion: '2.9.9' },
    });
  });

  it('says so when a BOM has components only', async () => {
    const { findings, result } = await parseFixture('scans/cyclonedx/cyclonedx_bom.xml');
    expect(findings).toHaveLength(0);
    expect(result.notes).toEqual(['BOM has 73 components but no vulnerabilities']);
  });

  it('reads CLI findings JSON with string and object locations', async () => {
    const { findings } = await parseFixture('own:cli-findings.json');
    expect(
      findings.map((f) => [f.scanner, f.ruleId, f.asset.file, f.asset.line, f.asset.ip, f.port]),
    ).toEqual([
      ['acme-scan', 'ACME-SQLI-001', 'src/auth/login.ts', 42, null, null],
      ['acme-scan', null, 'Dockerfile', 3, '10.4.0.12', null],
      ['acme-scan', null, null, null, '10.4.0.13', 23],
    ]);
    expect(findings[1]?.cveIds).toEqual(['CVE-2022-0778', 'CVE-2023-0286']);
  });
});
