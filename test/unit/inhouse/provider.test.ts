import { describe, expect, it } from 'vitest';
import type { CveEnrichment } from '../../../src/domain/enrichment/types.js';
import { createInhouseProvider, inhouseInputFromRequest } from '../../../src/domain/inhouse/provider.js';
import type { TriageRequest } from '../../../src/domain/triage-engine/types.js';
import { shippedModel } from './support.js';
import { buildPrompt } from '../../../src/domain/triage-engine/prompt.js';

const kevRecord: CveEnrichment = {
  cveId: 'CVE-2021-44228',
  kev: true,
  kevRansomware: true,
  kevDateAdded: '2021-12-10',
  kevDueDate: '2021-12-24',
  epss: 0.97,
  epssPercentile: 1,
  epssDate: null,
  cvssScore: 10,
  cvssVersion: '3.1',
  cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H',
};

const request: TriageRequest = {
  cveIds: ['CVE-2021-44228'],
  title: 'Log4Shell',
  severity: 'CRITICAL',
  description: 'JNDI lookup allows remote code execution.',
  asset: { criticality: 'CRITICAL', environment: 'PRODUCTION', internetExposed: true },
};

describe('in-house provider', () => {
  it('builds its input from the request and stored enrichment', () => {
    const input = inhouseInputFromRequest(request, new Map([[kevRecord.cveId, kevRecord]]));
    expect(input).toEqual({
      kev: true,
      cvssScore: 10,
      cvssVector: kevRecord.cvssVector,
      text: 'JNDI lookup allows remote code execution.',
      cve: kevRecord.cveId,
      mission: 'high',
    });
  });

  it('answers like any provider, without tokens, and never proposes a severity', async () => {
    const provider = createInhouseProvider(shippedModel());
    const enrichment = new Map([[kevRecord.cveId, kevRecord]]);
    const prompt = buildPrompt(request, enrichment);
    const result = await provider.triage({ request, enrichment, prompt, model: 'x' });
    expect(provider.name).toBe('inhouse');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    expect(result.answer.severityOverride).toBeNull();
    expect(['CRITICAL', 'HIGH']).toContain(result.answer.priority);
  });

  it('answers a request without CVEs or asset from its text alone', async () => {
    const provider = createInhouseProvider(shippedModel());
    const request = {
      title: 'Reflected XSS',
      severity: 'HIGH' as const,
      description: 'Cross-site scripting in search.',
    };
    const result = await provider.triage({
      request,
      enrichment: new Map(),
      prompt: buildPrompt(request, new Map()),
      model: 'x',
    });
    expect(result).toMatchObject({ ok: true, answer: { priority: 'LOW', recommendedAction: 'MONITOR' } });
  });
});
