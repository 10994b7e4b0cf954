import { createReadStream } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseScanToArray, type ParseScanOptions } from '../../../src/parsers/index.js';

/** Real scanner outputs (never edited): test/fixtures/scans, sources in test/fixtures/README.md. */
export const SCANNER_FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
/** This suite's own edge-case fixtures. */
export const OWN_FIXTURES = fileURLToPath(new URL('../../fixtures/parsers/', import.meta.url));

/** Resolves 'scans/nessus/x.nessus' against test/fixtures and 'own:x' against ours. */
export function fixturePath(name: string): string {
  return name.startsWith('own:') ? path.join(OWN_FIXTURES, name.slice(4)) : path.join(SCANNER_FIXTURES, name);
}

/** Parses a fixture file through the public streaming API with small reads, to cross chunk boundaries. */
export function parseFixture(name: string, options: ParseScanOptions = {}) {
  return parseScanToArray(createReadStream(fixturePath(name), { highWaterMark: 4096 }), options);
}
