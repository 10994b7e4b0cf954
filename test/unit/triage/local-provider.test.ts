import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { createLocalProvider, localAnswer } from '../../../src/domain/triage-engine/providers/local.js';
import { buildPrompt, buildUserPrompt, SYSTEM_PROMPT } from '../../../src/domain/triage-engine/prompt.js';
import type { CveEnrichment } from '../../../src/domain/enrichment/types.js';
import type { TriageAnswer, TriageRequest } from '../../../src/domain/triage-engine/types.js';
import { enrichment, enrichmentMap } from './enrichment-fixtures.js';

const CVE = 'CVE-2021-44228';
const NET = 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H';

interface Case {
  name: string;
  request: TriageRequest;
  record: Partial<CveEnrichment>;
  expected: Partial<TriageAnswer>;
  decision: string;
}

describe('localAnswer', () => {
  it.each<Case>([
    {
      name: 'Log4Shell on an exposed critical asset: Act',
      request: {
        cveIds: [CVE],
        title: 'Log4Shell',
        severity: 'CRITICAL',
        asset: { criticality: 'CRITICAL', internetExposed: true },
      },
      record: { kev: true, kevRansomware: true, epss: 0.944, cvssScore: 10, cvssVector: NET },
      expected: {
        priority: 'CRITICAL',
        recommendedAction: 'PATCH_IMMEDIATELY',
        confidenceScore: 0.95,
        severityOverride: null,
      },
      decision: 'Act',
    },
    {
      name: 'KEV on a low-criticality test box: Attend, severity raised to HIGH',
      request: {
        cveIds: [CVE],
        title: 't',
        severity: 'MEDIUM',
        asset: { criticality: 'LOW', environment: 'TEST' },
      },
      record: {
        kev: true,
        epss: 0.02,
        cvssScore: 9.8,
        cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
      },
      expected: { priority: 'HIGH', recommendedAction: 'PATCH_SCHEDULED', severityOverride: 'CRITICAL' },
      decision: 'Attend',
    },
    {
      name: 'quiet local-only CVE: Track keeps the submitted LOW',
      request: { cveIds: [CVE], title: 't', severity: 'LOW', asset: { criticality: 'MEDIUM' } },
      record: { epss: 0.0004, cvssScore: 3.3, cvssVector: 'CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:L/I:N/A:N' },
      expected: {
        priority: 'LOW',
        recommendedAction: 'MONITOR',
        confidenceScore: 0.9,
        severityOverride: null,
      },
      decision: 'Track',
    },
  ])('$name', ({ request, record, expected, decision }) => {
    const answer = localAnswer(request, enrichmentMap(enrichment(CVE, record)));
    expect(answer).toMatchObject(expected);
    expect(answer.reasoning).toContain(`SSVC 2.0.3 decision: ${decision}`);
  });

  it('has low confidence with nothing but a description, so a model is asked next', () => {
    const answer = localAnswer(
      { title: 'Hard-coded password', severity: 'HIGH', description: 'found in config' },
      enrichmentMap(),
    );
    expect(answer.confidenceScore).toBe(0.4);
    expect(answer.reasoning).toMatch(/^This finding has no KEV, EPSS or CVSS record/);
  });

  it('explains in plain words what it saw', () => {
    const answer = localAnswer(
      {
        cveIds: [CVE],
        title: 'x',
        severity: 'HIGH',
        asset: { criticality: 'HIGH', environment: 'PRODUCTION', internetExposed: true },
      },
      enrichmentMap(
        enrichment(CVE, { kev: true, kevRansomware: true, epss: 0.5, cvssScore: 10, cvssVector: NET }),
      ),
    );
    expect(answer.reasoning).toBe(
      "CVE-2021-44228 is in CISA's Known Exploited Vulnerabilities catalog, with known ransomware use. " +
        'Its EPSS score is 0.500, which makes exploitation likely soon. ' +
        'CVSS 10.0: attacks can be automated, and a successful attack gives full control. ' +
        'The asset is internet-exposed production high-criticality, so the mission impact is high. ' +
        'SSVC 2.0.3 decision: Act; recommended: patch immediately.',
    );
  });
});

describe('createLocalProvider', () => {
  it('counts tokens over the exact prompt it read and answer it wrote', async () => {
    const request = { cveIds: [CVE], title: 'x', severity: 'HIGH' as const };
    const enriched = enrichmentMap(enrichment(CVE, { epss: 0.2 }));
    const input = {
      request,
      enrichment: enriched,
      prompt: buildPrompt(request, enriched),
      model: 'ssvc-2.0.3',
    };
    const result = await createLocalProvider().triage(input);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.usage).toEqual({
      inputTokens: countTokens(SYSTEM_PROMPT) + countTokens(buildUserPrompt(request, enriched)),
      outputTokens: countTokens(JSON.stringify(result.answer)),
    });
    expect(result.usage.inputTokens).toBeGreaterThan(100);
  });
});
