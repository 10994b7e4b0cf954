import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import {
  mappingErrors,
  renderLabels,
  renderSummary,
  renderTemplate,
} from '../../../src/domain/workflows/template.js';
import {
  DELIVERY_ATTEMPTS,
  deliveryBackoffMs,
  minimumScheduleMs,
} from '../../../src/domain/workflows/backoff.js';
import { failureOf, retryAfterMs } from '../../../src/domain/workflows/targets/target-result.js';
import {
  hubSignature,
  newWorkflowSecret,
  standardWebhookHeaders,
  verifyHubSignature,
} from '../../../src/domain/workflows/signing.js';
import { sealWorkflowSecret, unsealWorkflowSecret } from '../../../src/domain/workflows/sealing.js';
import { caseToAdf } from '../../../src/domain/workflows/targets/adf.js';
import type { DeliveryCase } from '../../../src/domain/workflows/types.js';

const c: DeliveryCase = {
  id: '6f1c1d1e-0000-4000-8000-000000000001',
  title: 'Apache Log4j RCE',
  severity: 'CRITICAL',
  priority: 'HIGH',
  recommendedAction: 'PATCH_IMMEDIATELY',
  reasoning: 'Exploited in the wild.',
  status: 'open',
  scanner: 'nessus',
  ruleId: '156032',
  cveIds: ['CVE-2021-44228'],
  cvssScore: 10,
  epss: 0.97534,
  kev: true,
  asset: 'web1',
  host: '10.0.0.5',
  component: null,
  environment: 'PRODUCTION',
  firstSeen: new Date('2026-11-01T00:00:00Z'),
  lastSeen: new Date('2026-11-20T00:00:00Z'),
  url: 'https://vt.example/api/v1/cases/6f1c',
  consoleUrl: 'https://vt.example/cases/6f1c',
  kevDueDate: '2021-12-24',
  dueAt: new Date('2026-11-08T00:00:00Z'),
  assignee: 'alice@acme.test',
  tags: ['payments', 'pci'],
};

describe('field-mapping templates', () => {
  it.each([
    ['{{case.title}} on {{case.asset}}', 'Apache Log4j RCE on web1'],
    ['[{{ case.priority }}] {{case.cve}} {{case.kev}}', '[HIGH] CVE-2021-44228 KEV'],
    ['{{case.epss}} / {{case.cvss}}', '0.975 / 10'],
    ['owner {{case.assignee}} [{{case.tags}}]', 'owner alice@acme.test [payments, pci]'],
    ['no placeholders', 'no placeholders'],
    ['{{case.nope}}{{process.env}}', ''],
  ])('renders %s', (template, expected) => {
    expect(renderTemplate(template, c)).toBe(expected);
  });

  it('refuses unknown placeholders and fixed text over the limit, naming the field', () => {
    expect(
      mappingErrors({ summary: '{{constructor}}', labels: ['ok', '{{case.__proto__}}'] }, { summary: 255 }),
    ).toEqual([
      { path: '/fields/summary', message: expect.stringContaining('unknown placeholder {{constructor}}') },
      {
        path: '/fields/labels/1',
        message: expect.stringContaining('unknown placeholder {{case.__proto__}}'),
      },
    ]);
    expect(mappingErrors({ summary: 'x'.repeat(256) }, { summary: 255 })).toHaveLength(1);
    expect(mappingErrors({ summary: `${'x'.repeat(250)}{{case.title}}` }, { summary: 255 })).toEqual([]);
  });

  it('cuts a rendered summary to the limit with an ellipsis; labels de-duplicated with the mapped priority', () => {
    const long = renderSummary({ summary: '{{case.title}}'.repeat(40) }, c, 255);
    expect([...long]).toHaveLength(255);
    expect(long.endsWith('…')).toBe(true);
    expect(
      renderLabels({ labels: ['sec', '{{case.scanner}}', 'sec'], priority: { HIGH: 'P1' } }, c, true),
    ).toEqual(['sec', 'nessus', 'P1']);
  });
});

describe('delivery backoff', () => {
  it(`spans more than 24 hours over ${DELIVERY_ATTEMPTS} attempts, capped at an hour per wait`, () => {
    expect(minimumScheduleMs(DELIVERY_ATTEMPTS)).toBeGreaterThan(24 * 3_600_000);
    expect(deliveryBackoffMs(1, undefined, { random: () => 0 })).toBe(30_000);
    expect(deliveryBackoffMs(3, undefined, { random: () => 0 })).toBe(120_000);
    expect(deliveryBackoffMs(30, undefined, { random: () => 0.999 })).toBeLessThanOrEqual(3_600_000 * 1.25);
  });

  it('never sooner than Retry-After; jitter only adds', () => {
    expect(deliveryBackoffMs(1, 90_000, { random: () => 0 })).toBe(90_000);
    expect(deliveryBackoffMs(2, undefined, { random: () => 1 })).toBe(75_000);
  });
});

describe('target answers', () => {
  const ok = (status: number, headers: Record<string, string> = {}, body = '') =>
    ({ ok: true, status, headers, body }) as const;

  it.each([
    [500, {}, true],
    [503, {}, true],
    [429, { 'retry-after': '7' }, true],
    [408, {}, true],
    [409, {}, true],
    [403, { 'retry-after': '60' }, true],
    [
      403,
      { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 30) },
      true,
    ],
    [403, {}, false],
    [400, {}, false],
    [404, {}, false],
    [422, {}, false],
  ])('%i %j retryable: %s', (status, headers, retryable) => {
    expect(failureOf(ok(status, headers))).toMatchObject({ ok: false, retryable, status });
  });

  it('reads Retry-After as seconds or a date, and the messages of Jira and GitHub error bodies', () => {
    expect(retryAfterMs({ 'retry-after': '3' })).toBe(3000);
    expect(retryAfterMs({ 'retry-after': new Date(Date.now() + 10_000).toUTCString() })).toBeGreaterThan(
      8000,
    );
    expect(
      failureOf(ok(400, {}, JSON.stringify({ errorMessages: ['Bad'], errors: { summary: 'too long' } }))),
    ).toMatchObject({
      message: 'HTTP 400: Bad; summary: too long',
    });
    expect(
      failureOf(
        ok(
          422,
          {},
          JSON.stringify({
            message: 'Validation Failed',
            errors: [{ field: 'title', code: 'custom', message: 'too long' }],
          }),
        ),
      ),
    ).toMatchObject({ message: 'HTTP 422: Validation Failed; title custom too long' });
    expect(failureOf({ ok: false, reason: 'timeout' })).toMatchObject({
      retryable: true,
      status: null,
      message: 'timeout',
    });
    expect(failureOf({ ok: false, reason: 'refused_address' })).toMatchObject({ retryable: false });
    expect(failureOf(ok(201))).toBeNull();
  });
});

describe('signatures and sealing', () => {
  it('signs per Standard Webhooks (verifiable by the standardwebhooks package) and refuses a tampered body', () => {
    const secret = newWorkflowSecret();
    const body = JSON.stringify({ type: 'case.created' });
    const headers = standardWebhookHeaders(secret, 'msg_1', new Date(), body);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual({ type: 'case.created' });
    expect(() => new Webhook(secret).verify(body.replace('created', 'updated'), headers)).toThrow();
  });

  it('verifies X-Hub-Signature(-256) in constant time, refusing anything else', () => {
    const body = Buffer.from('{"action":"closed"}');
    expect(verifyHubSignature('s3cret', body, hubSignature('s3cret', body))).toBe(true);
    for (const h of [
      undefined,
      '',
      'sha1=abc',
      hubSignature('other', body),
      hubSignature('s3cret', body).slice(0, -1),
    ])
      expect(verifyHubSignature('s3cret', body, h)).toBe(false);
  });

  it('seals secrets bound to their workflow', () => {
    const sealed = sealWorkflowSecret('pepper', 'wf-1', 'token-123');
    expect(sealed).not.toContain('token-123');
    expect(unsealWorkflowSecret('pepper', 'wf-1', sealed)).toBe('token-123');
    expect(() => unsealWorkflowSecret('pepper', 'wf-2', sealed)).toThrow();
    expect(() => unsealWorkflowSecret('other', 'wf-1', sealed)).toThrow();
  });

  it('builds an ADF document with CVE links', () => {
    const doc = caseToAdf(c);
    expect(doc).toMatchObject({ version: 1, type: 'doc' });
    expect(JSON.stringify(doc)).toContain('https://nvd.nist.gov/vuln/detail/CVE-2021-44228');
  });
});
