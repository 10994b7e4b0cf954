import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { extractAliases } from '../../../src/parsers/format-parser.js';
import { parseScanToArray } from '../../../src/parsers/index.js';

/** docs/cases.md#one-vulnerability-one-case: a vulnerability's identifiers other than CVEs. */
describe('extractAliases', () => {
  it.each([
    ['GHSA-jfh8-c2jp-5v3q', ['GHSA-jfh8-c2jp-5v3q']],
    ['ghsa-JFH8-C2JP-5V3Q', ['GHSA-jfh8-c2jp-5v3q']],
    [
      'see https://github.com/advisories/GHSA-jfh8-c2jp-5v3q and PYSEC-2021-19',
      ['GHSA-jfh8-c2jp-5v3q', 'PYSEC-2021-19'],
    ],
    ['rustsec-2021-0001, GO-2022-0969, OSV-2020-111', ['RUSTSEC-2021-0001', 'GO-2022-0969', 'OSV-2020-111']],
    ['CVE-2021-44228', []],
    ['GHSA-aaaa-bbbb', []],
    [null, []],
  ])('%s', (text, expected) => {
    expect(extractAliases(text)).toEqual(expected);
  });
});

const parse = async (text: string) => (await parseScanToArray(Readable.from([Buffer.from(text)]))).findings;

describe('aliases of a finding', () => {
  it('CycloneDX: the id and references that are not CVEs', async () => {
    const bom = {
      bomFormat: 'CycloneDX',
      specVersion: '1.5',
      components: [
        { 'bom-ref': 'c1', name: 'log4j-core', version: '2.14.1', purl: 'pkg:maven/a/log4j-core@2.14.1' },
      ],
      vulnerabilities: [
        {
          id: 'GHSA-jfh8-c2jp-5v3q',
          references: [{ id: 'CVE-2021-44228' }, { id: 'SNYK-JAVA-ORGAPACHELOGGINGLOG4J-2314720' }],
          affects: [{ ref: 'c1' }],
        },
      ],
    };
    const [f] = await parse(JSON.stringify(bom));
    expect(f!.cveIds).toEqual(['CVE-2021-44228']);
    expect(f!.aliases).toEqual(['GHSA-jfh8-c2jp-5v3q', 'SNYK-JAVA-ORGAPACHELOGGINGLOG4J-2314720']);
  });

  it('SARIF: advisory ids in the rule id, tags and properties', async () => {
    const sarif = {
      version: '2.1.0',
      runs: [
        {
          tool: {
            driver: {
              name: 'Grype',
              rules: [
                {
                  id: 'GHSA-jfh8-c2jp-5v3q-log4j-core',
                  properties: { tags: ['CVE-2021-44228'], aliases: ['PYSEC-2021-19'] },
                },
              ],
            },
          },
          results: [{ ruleId: 'GHSA-jfh8-c2jp-5v3q-log4j-core', message: { text: 'x' } }],
        },
      ],
    };
    const [f] = await parse(JSON.stringify(sarif));
    expect(f!.cveIds).toEqual(['CVE-2021-44228']);
    expect(f!.aliases).toEqual(['GHSA-jfh8-c2jp-5v3q', 'PYSEC-2021-19']);
  });

  it('Nessus: advisory ids among the xrefs', async () => {
    const nessus = `<?xml version="1.0" ?><NessusClientData_v2><Report name="r"><ReportHost name="10.0.0.5">
      <ReportItem port="443" protocol="tcp" severity="4" pluginID="155999" pluginName="Apache Log4j RCE">
        <cve>CVE-2021-44228</cve><xref>CWE:502</xref><xref>GHSA:GHSA-jfh8-c2jp-5v3q</xref><xref>IAVA:2021-A-0573</xref>
      </ReportItem></ReportHost></Report></NessusClientData_v2>`;
    const [f] = await parse(nessus);
    expect(f!.aliases).toEqual(['GHSA-jfh8-c2jp-5v3q']);
    expect(f!.cweIds).toEqual(['CWE-502']);
  });
});
