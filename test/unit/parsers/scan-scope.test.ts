import { createReadStream } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseScanToArray } from '../../../src/parsers/index.js';
import { MAX_SCOPE_HOSTS, ScopeCollector } from '../../../src/parsers/scope.js';

/**
 * docs/ingestion.md#rescans: each parse reports what the file covered — its scanners, every host
 * it lists (with findings or not) and, for files without hosts, the subject the file names.
 */
const scopeOf = async (file: string) =>
  (await parseScanToArray(createReadStream(path.resolve('test/fixtures/scans', file)))).result.scope;

describe('the scope a parse reports', () => {
  it('Nessus: every ReportHost, the one listed without ReportItems too', async () => {
    const scope = await scopeOf('rescan/nessus-second.nessus');
    expect(scope.scanners).toEqual(['Nessus']);
    expect(scope.hosts).toEqual([
      { ip: '10.31.112.21', fqdn: 'qa3app01', host: 'qa3app01' },
      { ip: '10.31.112.22', fqdn: 'qa3app02', host: 'qa3app02' },
      { ip: '10.31.112.23', fqdn: 'qa3app03', host: 'qa3app03' },
    ]);
    expect(scope.subjects).toEqual([]);
  });

  it('Qualys: a scan report IP without findings is covered', async () => {
    const scope = await scopeOf('qualys/qualys_infrascan_webgui_0.xml');
    expect(scope.scanners).toEqual(['Qualys']);
    expect(scope.hosts).toEqual([{ ip: '10.1.10.1', fqdn: 'host1.example.com', host: 'host1.example.com' }]);
  });

  it('Qualys asset data report and OpenVAS: the hosts they list', async () => {
    expect((await scopeOf('qualys/Qualys_Sample_Report.xml')).hosts).toHaveLength(7);
    const openvas = await scopeOf('openvas/one_vuln.xml');
    expect(openvas.hosts).toEqual([{ ip: '10.0.101.2', fqdn: null, host: '10.0.101.2' }]);
  });

  it('SARIF: the run’s tool and versionControlProvenance, even without results', async () => {
    const scope = await scopeOf('rescan/njsscan-repo-b.sarif');
    expect(scope).toEqual({
      scanners: ['nodejsscan'],
      hosts: [],
      tooManyHosts: false,
      subjects: ['https://git.example.com/shop/admin'],
    });
  });

  it('CycloneDX JSON and XML: metadata.component, without its version', async () => {
    expect((await scopeOf('rescan/jake2-shop-api-1.1.json')).subjects).toEqual(['shop-api']);
    expect((await scopeOf('cyclonedx/log4j.xml')).subjects).toEqual([
      './configuration/.m2/repository/org/apache/logging/log4j/log4j-core/2.13.2',
    ]);
    expect((await scopeOf('cyclonedx/jake2.json')).subjects).toEqual([]);
  });

  it('keeps no hosts past the bound, and says it was exceeded', () => {
    const c = new ScopeCollector();
    for (let i = 0; i <= MAX_SCOPE_HOSTS; i++)
      c.addHost({ ip: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}` });
    expect(c.result()).toMatchObject({ hosts: [], tooManyHosts: true });
  });

  it('adds the scanner and host of every finding, whether findings come grouped or interleaved', () => {
    const asset = (ip: string | null, host: string | null) => ({
      ip,
      fqdn: null,
      host,
      os: null,
      component: null,
      componentVersion: null,
      purl: null,
      file: null,
      line: null,
    });
    const c = new ScopeCollector();
    for (const [scanner, ip, host] of [
      ['Nessus', '10.0.0.1', 'a'],
      ['Nessus', '10.0.0.1', 'a'],
      ['Nessus', null, 'b'],
      ['OpenVAS', null, 'b'],
      ['Nessus', '10.0.0.1', 'a'],
      ['Nessus', '10.0.0.2', 'a'],
      ['Nessus', null, null],
    ] as const)
      c.addFinding({ scanner, asset: asset(ip, host) });
    expect(c.result()).toMatchObject({
      scanners: ['Nessus', 'OpenVAS'],
      hosts: [
        { ip: '10.0.0.1', fqdn: null, host: 'a' },
        { ip: null, fqdn: null, host: 'b' },
        { ip: '10.0.0.2', fqdn: null, host: 'a' },
      ],
    });
  });
});
