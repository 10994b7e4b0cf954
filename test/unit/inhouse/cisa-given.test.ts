import { describe, expect, it } from 'vitest';
import type { CveEnrichment } from '../../../src/domain/enrichment/types.js';
import { loadInhouseModel } from '../../../src/domain/inhouse/model.js';
import { inhouseTriageRequest } from '../../../src/domain/inhouse/provider.js';
import type { TriageRequest } from '../../../src/domain/triage-engine/types.js';
import { enrichment, enrichmentMap } from '../triage/enrichment-fixtures.js';
import { INHOUSE_MODEL_PATH, readInhouseModelJson } from '../../../src/domain/inhouse/model-file.js';

const model = loadInhouseModel(readInhouseModelJson(INHOUSE_MODEL_PATH));
const CVE = 'CVE-2023-36140';
const request: TriageRequest = {
  cveIds: [CVE],
  title: 'rce',
  severity: 'HIGH',
  asset: { criticality: 'CRITICAL', internetExposed: true },
};
const record = (cisaSsvc: CveEnrichment['cisaSsvc']) => enrichmentMap(enrichment(CVE, { cisaSsvc }));

describe('the in-house model and CISA’s own decision points', () => {
  it('uses them as given instead of its predictions, and cites them', () => {
    const given = inhouseTriageRequest(
      model,
      request,
      record({
        exploitation: 'active',
        automatable: 'yes',
        technicalImpact: 'total',
        version: '2.0.3',
        scoredAt: new Date('2024-09-26T14:58:24Z'),
      }),
    );
    expect(given.decisionPoints).toMatchObject({
      exploitation: 'active',
      automatable: 'yes',
      technicalImpact: 'total',
    });
    expect(given.ssvcOutcome).toBe('Act');
    expect(given.confidenceScore).toBe(0.95);
    expect(given.reasoning).toContain("CISA's own decision points [CISA SSVC 2.0.3, 2024-09-26]");
  });

  it('predicts them when CISA has not scored the CVE', () => {
    const predicted = inhouseTriageRequest(model, request, record(null));
    expect(predicted.reasoning).not.toContain('CISA SSVC');
    expect(predicted.ssvcOutcome).not.toBe('Act');
  });
});
