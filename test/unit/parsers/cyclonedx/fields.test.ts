import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { detectFormat, parseScan } from '../../../../src/parsers/index.js';
import { fixturePath, parseFixture } from '../fixture-paths.js';

/* Field-by-field checks of chosen findings; values read from the files by hand. */

describe('CycloneDX fields', () => {
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
});
