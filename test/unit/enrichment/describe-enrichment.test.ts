import { describe, expect, it } from 'vitest';
import { describeEnrichment } from '../../../src/domain/enrichment/snapshot.js';
import type { EnrichmentStatus } from '../../../src/domain/enrichment/snapshot.js';

const none: EnrichmentStatus = { kev: null, epss: null, cvss: null, cisaSsvc: null };

describe('the start banner names CISA Vulnrichment', () => {
  it('when its sources are configured and nothing is loaded yet', () => {
    const lines = describeEnrichment(none, { kev: false, epss: false, vulnrichment: true });
    expect(lines[2]).toBe(
      'CISA Vulnrichment: not loaded yet. Refreshed daily from ENRICHMENT_VULNRICHMENT_SOURCES; now: npm run admin -- enrich --vulnrichment DIR|URL',
    );
  });

  it('with the number of CVEs CISA scored once loaded, configured or not', () => {
    const loaded = { ...none, cisaSsvc: { decisions: 12345 } };
    expect(describeEnrichment(loaded, { kev: false, epss: false, vulnrichment: true })[2]).toBe(
      'CISA Vulnrichment: SSVC decisions for 12,345 CVEs. Refreshed daily from ENRICHMENT_VULNRICHMENT_SOURCES; now: npm run admin -- enrich --vulnrichment DIR|URL',
    );
    expect(describeEnrichment(loaded)[2]).toBe(
      'CISA Vulnrichment: SSVC decisions for 12,345 CVEs. Refresh: npm run admin -- enrich --vulnrichment DIR|URL',
    );
  });

  it('not at all when neither configured nor loaded (an optional source)', () => {
    expect(describeEnrichment(none, { kev: true, epss: true, vulnrichment: false })).toHaveLength(2);
  });
});
