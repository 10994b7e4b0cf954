import { describe, expect, it } from 'vitest';
import { detectFormat, isScanFormat, FORMAT_OVERRIDES } from '../../../src/parsers/index.js';

/* Fixture files are covered in fixtures.test.ts; these are the edge cases of the head sniffing. */
describe('detectFormat edge cases', () => {
  it.each([
    [
      'BOM, whitespace, declaration, comment and DOCTYPE before the root',
      '\uFEFF \n<?xml version="1.0"?>\n<!-- c -->\n<!DOCTYPE SCAN SYSTEM "https://x/scan-1.dtd">\n<SCAN value="1">',
      'qualys',
    ],
    [
      'DOCTYPE with an internal subset',
      '<!DOCTYPE report [<!ELEMENT report ANY>]><report id="1">',
      'openvas',
    ],
    ['asset data report', '<ASSET_DATA_REPORT>', 'qualys'],
    ['host detection list', '<HOST_LIST_VM_DETECTION_OUTPUT><RESPONSE>', 'qualys'],
    ['GMP wrapper', '<get_reports_response status="200"><report>', 'openvas'],
    ['Nessus root', '<NessusClientData_v2>', 'nessus'],
    [
      'CycloneDX XML with a namespace prefix',
      '<cdx:bom xmlns:cdx="http://cyclonedx.org/schema/bom/1.6">',
      'cyclonedx',
    ],
    ['bom without the CycloneDX namespace', '<bom xmlns="http://example.com/other">', null],
    ['SARIF by $schema', '{"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "runs": [', 'sarif'],
    ['SARIF by runs + version in any order', '{"runs": [], "version": "2.1.0"}', 'sarif'],
    ['SARIF without version, by runs[0].tool', '{"runs": [{"tool": {"driver": {"name": "x"', 'sarif'],
    ['CycloneDX JSON', '{"bomFormat": "CycloneDX", "specVersion": "1.6"', 'cyclonedx'],
    ['CLI findings document', '{"tool": {"name": "acme"}, "findings": [', 'cli'],
    ['CLI JSON Lines', '{"title": "x", "severity": "high"}\n{"title": "y", "severity": "low"}\n', 'cli'],
    ['JSON of some other kind', '{"hello": "world"}', null],
    ['JSON Lines that are not findings', '{"a": 1}\n{"b": 2}\n', null],
    ['HTML', '<!DOCTYPE html><html>', null],
    ['binary', '\u0000\u0001\u0002', null],
    ['empty', '', null],
  ])('%s', (_name, text, expected) => {
    expect(detectFormat(Buffer.from(text, 'utf8'))).toBe(expected);
  });

  it('accepts exactly the six override names', () => {
    expect([...FORMAT_OVERRIDES]).toEqual(['nessus', 'qualys', 'openvas', 'sarif', 'cyclonedx', 'cli']);
    expect(isScanFormat('sarif')).toBe(true);
    expect(isScanFormat('SARIF')).toBe(false);
    expect(isScanFormat('xml')).toBe(false);
  });
});
