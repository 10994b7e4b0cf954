import { describe, expect, it } from 'vitest';
import { parseFixture } from '../fixture-paths.js';

/* Field-by-field checks of chosen findings; values read from the files by hand. */

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
