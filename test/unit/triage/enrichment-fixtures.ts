/** Builders for enrichment maps used across the triage unit tests. */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CveEnrichment } from '../../../src/domain/enrichment/types.js';

/** One enrichment record with "no signal" defaults, overridden per test. */
export function enrichment(cveId: string, over: Partial<CveEnrichment> = {}): CveEnrichment {
  return {
    cveId,
    kev: false,
    kevRansomware: false,
    kevDateAdded: null,
    kevDueDate: null,
    epss: null,
    epssPercentile: null,
    epssDate: null,
    cvssScore: null,
    cvssVersion: null,
    cvssVector: null,
    ...over,
  };
}

export function enrichmentMap(...records: CveEnrichment[]): Map<string, CveEnrichment> {
  return new Map(records.map((r) => [r.cveId, r]));
}

interface KevEntry {
  cveID: string;
  dateAdded: string;
  dueDate: string;
  knownRansomwareCampaignUse: string;
}

/** Reads the CISA KEV catalog fixture (2025.08.25, gzipped in test/fixtures/enrichment). */
export function loadKevFixture(): CveEnrichment[] {
  const here = dirname(fileURLToPath(import.meta.url));
  const file = resolve(here, '../../fixtures/enrichment/known_exploited_vulnerabilities.json.gz');
  const catalog = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as {
    vulnerabilities: KevEntry[];
  };
  return catalog.vulnerabilities.map((v) =>
    enrichment(v.cveID, {
      kev: true,
      kevRansomware: v.knownRansomwareCampaignUse === 'Known',
      kevDateAdded: v.dateAdded,
      kevDueDate: v.dueDate,
    }),
  );
}
