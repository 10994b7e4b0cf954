import { readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  FORMAT_MODULES,
  FORMAT_OVERRIDES,
  SCAN_FORMATS,
  UNSUPPORTED_FORMAT_MESSAGE,
  detectFormat,
  formatModule,
  isScanFormat,
} from '../../../src/parsers/index.js';
import {
  SCAN_FORMAT_LABELS,
  SCAN_FORMATS as DOMAIN_FORMATS,
} from '../../../src/domain/scans/scan-formats.js';
import { uploadQuery } from '../../../src/api/schemas/scans.js';
import { SCAN_FORMATS as CLI_FORMATS } from '../../../packages/cli/src/main.js';

/**
 * Adding a scan format is its folder (`src/parsers/<format>/`) and one line in the registry:
 * every other list of formats is derived from the registry, or checked against it here (the
 * CLI, which imports nothing of the server) and by `test/integration/scans/scan-formats.test.ts`
 * (the database's CHECK constraint). A registry line without the rest fails one of these.
 */
const registry = FORMAT_MODULES.map((m) => m.format);
const PARSERS = path.resolve('src/parsers');

describe('the registry of scan formats', () => {
  it('has one folder per format, each exporting the module it registers, and no folder left out', () => {
    const folders = readdirSync(PARSERS, { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(path.join(PARSERS, d.name, 'index.ts')))
      .map((d) => d.name);
    expect([...folders].sort()).toEqual([...registry].sort());
    expect(new Set(registry).size).toBe(registry.length);
  });

  it('each module names its format, labels it, recognises it and reads it', () => {
    for (const m of FORMAT_MODULES) {
      expect(formatModule(m.format)).toBe(m);
      expect(isScanFormat(m.format)).toBe(true);
      expect(m.label.length).toBeGreaterThan(0);
      expect(m.aFile.length).toBeGreaterThan(0);
      expect(typeof m.sniff).toBe('function');
      expect(typeof m.parse).toBe('function');
    }
    expect(isScanFormat('nmap')).toBe(false);
    expect(isScanFormat('constructor')).toBe(false);
  });

  it('every list of formats is the registry, in its order', () => {
    expect(SCAN_FORMATS).toEqual(registry);
    expect(FORMAT_OVERRIDES).toEqual(registry);
    expect(DOMAIN_FORMATS).toEqual(registry);
    expect(Object.keys(SCAN_FORMAT_LABELS)).toEqual(registry);
    expect(uploadQuery.properties.format.enum).toEqual(registry);
    // The CLI keeps its own copy (it stays free of the server's modules): it must be the same.
    expect(CLI_FORMATS).toEqual(registry);
  });

  it('the unsupported-format message lists every format, as it always read', () => {
    expect(UNSUPPORTED_FORMAT_MESSAGE).toBe(
      'The scan format could not be recognised. Supported: Nessus v2, Qualys, OpenVAS/Greenbone, SARIF 2.1.0, CycloneDX, CLI findings JSON/JSON Lines; pass format= to force one.',
    );
    for (const m of FORMAT_MODULES) expect(UNSUPPORTED_FORMAT_MESSAGE).toContain(m.listedAs);
  });

  it('detection asks every format: a declared format wins over a likely one, else registry order', () => {
    // Declares CycloneDX and has SARIF's shape: CycloneDX, as before the registry.
    const both = Buffer.from(
      '{"bomFormat":"CycloneDX","$schema":"https://json.schemastore.org/sarif-2.1.0.json","runs":[]}',
    );
    expect(detectFormat(both)).toBe('cyclonedx');
    // SARIF's shape and a `findings` key: SARIF comes first in the registry.
    expect(detectFormat(Buffer.from('{"version":"2.1.0","runs":[],"findings":[]}'))).toBe('sarif');
    expect(detectFormat(Buffer.from('<constructor/>'))).toBeNull();
  });
});
