import { describe, expect, it } from 'vitest';
import { parseFixture } from '../fixture-paths.js';

/* Field-by-field checks of chosen findings; values read from the files by hand. */

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
