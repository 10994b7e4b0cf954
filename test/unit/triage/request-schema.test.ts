import { describe, expect, it } from 'vitest';
import {
  buildBatchRequestSchema,
  checkBatchRequest,
  isAllowedWebhookUrl,
} from '../../../src/domain/triage/batch-schema.js';
import {
  TRIAGE_REQUEST_SCHEMA,
  checkTriageRequest,
} from '../../../src/domain/triage-engine/request-schema.js';
import { ASSET_TYPES, SEVERITIES } from '../../../src/domain/triage-engine/types.js';

const valid = { cveIds: ['CVE-2021-44228'], title: 'Log4Shell', severity: 'CRITICAL' };

describe('checkTriageRequest', () => {
  it.each([
    { name: 'cveIds, title and severity only (spec §2.3)', body: valid },
    {
      name: 'description instead of cveIds',
      body: { title: 't', severity: 'LOW', description: 'custom finding' },
    },
    {
      name: 'empty cveIds with description',
      body: { cveIds: [], title: 't', severity: 'INFO', description: 'd' },
    },
    {
      name: 'every field',
      body: {
        ...valid,
        description: 'd',
        cvssScore: 10,
        cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H',
        asset: {
          name: 'api',
          type: 'APPLICATION',
          environment: 'PRODUCTION',
          criticality: 'HIGH',
          internetExposed: true,
        },
      },
    },
  ])('accepts $name', ({ body }) => {
    expect(checkTriageRequest(body)).toEqual({ ok: true, value: body });
  });

  it.each([
    {
      name: 'a model field',
      body: { ...valid, model: 'gpt-4' },
      errors: [{ path: '/model', message: 'is not an allowed property' }],
    },
    {
      name: 'no cveIds and no description',
      body: { title: 't', severity: 'HIGH' },
      errors: [{ path: '/cveIds', message: 'must contain at least one CVE id unless description is given' }],
    },
    {
      name: 'empty cveIds without description',
      body: { ...valid, cveIds: [] },
      errors: [{ path: '/cveIds', message: 'must contain at least one CVE id unless description is given' }],
    },
    {
      name: 'a malformed CVE id',
      body: { ...valid, cveIds: ['CVE-2021-1'] },
      errors: [{ path: '/cveIds/0', message: 'must match ^CVE-\\d{4}-\\d{4,}$' }],
    },
    {
      name: 'a cvssScore above 10',
      body: { ...valid, cvssScore: 10.1 },
      errors: [{ path: '/cvssScore', message: 'must be between 0 and 10' }],
    },
    {
      name: 'an unknown severity',
      body: { ...valid, severity: 'URGENT' },
      errors: [{ path: '/severity', message: `must be one of ${SEVERITIES.join(', ')}` }],
    },
    {
      name: 'an unknown asset field and type',
      body: { ...valid, asset: { type: 'SERVER', owner: 'x' } },
      errors: [
        { path: '/asset/type', message: `must be one of ${ASSET_TYPES.join(', ')}` },
        { path: '/asset/owner', message: 'is not an allowed property' },
      ],
    },
    {
      name: 'a too long title',
      body: { ...valid, title: 'x'.repeat(501) },
      errors: [{ path: '/title', message: 'must be at most 500 characters' }],
    },
    {
      name: 'missing title and severity',
      body: { cveIds: ['CVE-2021-44228'] },
      errors: [
        { path: '/title', message: 'is required' },
        { path: '/severity', message: 'is required' },
      ],
    },
    { name: 'a non-object', body: [], errors: [{ path: '/', message: 'must be an object' }] },
    {
      name: 'duplicate CVEs',
      body: { ...valid, cveIds: ['CVE-2021-44228', 'CVE-2021-44228'] },
      errors: [{ path: '/cveIds', message: 'must not contain duplicate items' }],
    },
  ])('rejects $name listing every failing field', ({ body, errors }) => {
    expect(checkTriageRequest(body)).toEqual({ ok: false, errors });
  });
});

describe('TRIAGE_REQUEST_SCHEMA', () => {
  it('is draft-07, closed, and encodes the cveIds/description rule with anyOf', () => {
    expect(TRIAGE_REQUEST_SCHEMA.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(TRIAGE_REQUEST_SCHEMA.additionalProperties).toBe(false);
    expect(TRIAGE_REQUEST_SCHEMA.properties.asset.additionalProperties).toBe(false);
    // refused even when ajv runs with Fastify's removeAdditional: true
    expect(TRIAGE_REQUEST_SCHEMA.properties.model).toBe(false);
    expect(TRIAGE_REQUEST_SCHEMA.anyOf).toEqual([
      { required: ['cveIds'], properties: { cveIds: { type: 'array', minItems: 1 } } },
      { required: ['description'], properties: { description: { type: 'string' } } },
    ]);
    expect(new RegExp(TRIAGE_REQUEST_SCHEMA.properties.cveIds.items.pattern).test('CVE-2024-123456')).toBe(
      true,
    );
  });
});

describe('batch request', () => {
  it.each([
    { url: 'https://hooks.example.com/triage', loopback: false, ok: true },
    { url: 'http://hooks.example.com/triage', loopback: false, ok: false },
    { url: 'http://127.0.0.1:8123/hook', loopback: false, ok: false },
    { url: 'http://127.0.0.1:8123/hook', loopback: true, ok: true },
    { url: 'http://localhost:8123/hook', loopback: true, ok: false },
    { url: 'https://user:pass@example.com/', loopback: false, ok: false },
    { url: 'ftp://example.com/', loopback: true, ok: false },
  ])('webhookUrl scheme: $url (loopback http allowed: $loopback) → $ok', ({ url, loopback, ok }) => {
    expect(isAllowedWebhookUrl(url, { allowLoopbackHttp: loopback })).toBe(ok);
    // The schema's pattern checks the scheme only; hosts are the checker's business (below).
    const pattern = new RegExp(
      buildBatchRequestSchema({ allowLoopbackHttp: loopback }).properties.webhookUrl.pattern,
    );
    expect(pattern.test(url)).toBe(ok);
  });

  it.each([
    {
      url: 'https://169.254.169.254/latest/meta-data/',
      message: 'must not point to a private, loopback or internal host',
    },
    {
      url: 'https://[::ffff:169.254.169.254]/',
      message: 'must not point to a private, loopback or internal host',
    },
    { url: 'https://10.1.2.3/hook', message: 'must not point to a private, loopback or internal host' },
    { url: 'https://2130706433/hook', message: 'must not point to a private, loopback or internal host' },
    { url: 'https://[::1]:8443/hook', message: 'must not point to a private, loopback or internal host' },
    { url: 'https://[fd00::1]/hook', message: 'must not point to a private, loopback or internal host' },
    { url: 'https://localhost/hook', message: 'must not point to a private, loopback or internal host' },
    { url: 'https://api.localhost/hook', message: 'must not point to a private, loopback or internal host' },
    {
      url: 'https://metadata.google.internal/computeMetadata/v1/',
      message: 'must not point to a private, loopback or internal host',
    },
    { url: 'https://intranet/hook', message: 'must not point to a private, loopback or internal host' },
    { url: 'https://user:pass@hooks.example.com/', message: 'must not contain credentials' },
    { url: 'https://user@hooks.example.com/', message: 'must not contain credentials' },
    { url: 'http://hooks.example.com/', message: 'must be an https URL' },
    { url: 'https://127.0.0.1/hook', message: 'must not point to a private, loopback or internal host' },
  ])('webhookUrl $url is refused: $message', ({ url, message }) => {
    expect(isAllowedWebhookUrl(url)).toBe(false);
    // Loopback http is about the scheme of http://127.0.0.1 only; it admits no other host.
    expect(isAllowedWebhookUrl(url, { allowLoopbackHttp: true })).toBe(false);
    expect(checkBatchRequest({ items: [valid], webhookUrl: url })).toEqual({
      ok: false,
      errors: [{ path: '/webhookUrl', message }],
    });
  });

  it('admits private hosts only with allowPrivateHosts, and never credentials or plain http', () => {
    const opts = { allowPrivateHosts: true };
    expect(isAllowedWebhookUrl('https://127.0.0.1:8443/hook', opts)).toBe(true);
    expect(isAllowedWebhookUrl('https://localhost/hook', opts)).toBe(true);
    expect(isAllowedWebhookUrl('https://10.0.0.5/hook', opts)).toBe(true);
    expect(isAllowedWebhookUrl('https://0.0.0.0/hook', opts)).toBe(false);
    expect(isAllowedWebhookUrl('https://[ff02::1]/hook', opts)).toBe(false);
    expect(isAllowedWebhookUrl('https://u:p@10.0.0.5/hook', opts)).toBe(false);
    expect(isAllowedWebhookUrl('http://10.0.0.5/hook', opts)).toBe(false);
  });

  it('rejects a webhookUrl that is not a string or is too long', () => {
    for (const webhookUrl of [42, `https://hooks.example.com/${'a'.repeat(2048)}`]) {
      expect(checkBatchRequest({ items: [valid], webhookUrl })).toEqual({
        ok: false,
        errors: [{ path: '/webhookUrl', message: 'must be an https URL' }],
      });
    }
  });

  it('accepts 1..maxItems items and prefixes item errors with their index', () => {
    expect(checkBatchRequest({ items: [valid] }).ok).toBe(true);
    expect(checkBatchRequest({ items: [] })).toEqual({
      ok: false,
      errors: [{ path: '/items', message: 'must have between 1 and 1000 items' }],
    });
    expect(checkBatchRequest({ items: [valid, valid, valid] }, { maxItems: 2 }).ok).toBe(false);
    expect(checkBatchRequest({ items: [valid, { ...valid, model: 'x' }], extra: 1 })).toEqual({
      ok: false,
      errors: [
        { path: '/extra', message: 'is not an allowed property' },
        { path: '/items/1/model', message: 'is not an allowed property' },
      ],
    });
    expect(buildBatchRequestSchema({ maxItems: 100 }).properties.items.maxItems).toBe(100);
  });
});
