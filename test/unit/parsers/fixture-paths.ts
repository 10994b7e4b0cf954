import { createReadStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseScanToArray, type ParseScanOptions } from '../../../src/parsers/index.js';

/** Shared read-only fixtures (never edited): /work/shared/fixtures, beside the repository. */
export const SHARED_FIXTURES = fileURLToPath(new URL('../../../../shared/fixtures', import.meta.url));
/** This suite's own edge-case fixtures. */
export const OWN_FIXTURES = fileURLToPath(new URL('../../fixtures/parsers', import.meta.url));

/** Resolves 'scans/nessus/x.nessus' against the shared fixtures and 'own:x' against ours. */
export function fixturePath(name: string): string {
  return name.startsWith('own:') ? `${OWN_FIXTURES}${name.slice(4)}` : `${SHARED_FIXTURES}${name}`;
}

/** Parses a fixture file through the public streaming API with small reads, to cross chunk boundaries. */
export function parseFixture(name: string, options: ParseScanOptions = {}) {
  return parseScanToArray(createReadStream(fixturePath(name), { highWaterMark: 4096 }), options);
}
