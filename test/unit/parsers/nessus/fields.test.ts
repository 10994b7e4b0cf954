import { describe, expect, it } from 'vitest';
import { parseFixture } from '../fixture-paths.js';

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
