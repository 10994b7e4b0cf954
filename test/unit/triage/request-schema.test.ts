import { describe, expect, it } from 'vitest';
import { validators } from '../../../src/api/app.js';
import { fieldErrors } from '../../../src/api/plugins/problem.js';
import { batchRequestBody, triageRequestBody } from '../../../src/api/schemas/triage.js';
import {
  batchRequestErrors,
  triageRequestErrors,
  webhookUrlProblem,
  type BatchTriageRequest,
} from '../../../src/domain/triage/triage-requests.js';
import { ASSET_TYPES, SEVERITIES, type TriageRequest } from '../../../src/domain/triage-engine/types.js';

const valid = { cveIds: ['CVE-2021-44228'], title: 'Log4Shell', severity: 'CRITICAL' };

/**
 * The field errors a body gets on its way through a triage route: the schema, compiled by the
 * app's body validator and worded by the problem plugin, then (only if it passed) the domain's
 * rules — the order the route and the service apply them.
 */
const ajv = validators().body;
const validateTriage = ajv.compile(triageRequestBody);
const validateBatch = ajv.compile(batchRequestBody);

function triageErrors(body: unknown) {
  const validate = validateTriage;
  if (!validate(body)) return fieldErrors(validate.errors as Parameters<typeof fieldErrors>[0], 'body');
  return triageRequestErrors(body as TriageRequest);
}

function batchErrors(body: unknown, maxItems = 1000, loopback = false) {
  const validate = validateBatch;
  if (!validate(body)) return fieldErrors(validate.errors as Parameters<typeof fieldErrors>[0], 'body');
  return batchRequestErrors(body as BatchTriageRequest, maxItems, { allowLoopbackHttp: loopback });
}

describe('triage request', () => {
  it.each([
    { name: 'cveIds, title and severity only (docs/triage.md#request-and-answer)', body: valid },
    { name: 'description instead of cveIds', body: { title: 't', severity: 'LOW', description: 'custom' } },
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
    expect(triageErrors(body)).toEqual([]);
  });

  it.each([
    {
      name: 'a model field, like any unknown field',
      body: { ...valid, model: 'gpt-4' },
      errors: [{ path: '/model', message: 'is not an allowed field' }],
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
      errors: [{ path: '/cveIds/0', message: 'must be a CVE id such as CVE-2021-44228' }],
    },
    {
      name: 'a cvssScore above 10',
      body: { ...valid, cvssScore: 10.1 },
      errors: [{ path: '/cvssScore', message: 'must be <= 10' }],
    },
    {
      name: 'a string cvssScore (never coerced)',
      body: { ...valid, cvssScore: '9.8' },
      errors: [{ path: '/cvssScore', message: 'must be number' }],
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
        { path: '/asset/owner', message: 'is not an allowed field' },
        { path: '/asset/type', message: `must be one of ${ASSET_TYPES.join(', ')}` },
      ],
    },
    {
      name: 'a too long title',
      body: { ...valid, title: 'x'.repeat(501) },
      errors: [{ path: '/title', message: 'must NOT have more than 500 characters' }],
    },
    {
      name: 'missing title and severity',
      body: { cveIds: ['CVE-2021-44228'] },
      errors: [
        { path: '/title', message: 'is required' },
        { path: '/severity', message: 'is required' },
      ],
    },
    { name: 'a non-object', body: [], errors: [{ path: '/', message: 'must be object' }] },
    {
      name: 'duplicate CVEs',
      body: { ...valid, cveIds: ['CVE-2021-44228', 'CVE-2021-44228'] },
      errors: [
        { path: '/cveIds', message: 'must NOT have duplicate items (items ## 1 and 0 are identical)' },
      ],
    },
  ])('rejects $name listing every failing field', ({ body, errors }) => {
    expect(triageErrors(body)).toEqual(errors);
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
    expect(webhookUrlProblem(url, { allowLoopbackHttp: loopback }) === null).toBe(ok);
    expect(batchErrors({ items: [valid], webhookUrl: url }, 1000, loopback).length === 0).toBe(ok);
  });

  const HOST = 'must not point to a private, loopback or internal host';
  it.each([
    { url: 'https://169.254.169.254/latest/meta-data/', message: HOST },
    { url: 'https://[::ffff:169.254.169.254]/', message: HOST },
    { url: 'https://10.1.2.3/hook', message: HOST },
    { url: 'https://2130706433/hook', message: HOST },
    { url: 'https://[::1]:8443/hook', message: HOST },
    { url: 'https://[fd00::1]/hook', message: HOST },
    { url: 'https://localhost/hook', message: HOST },
    { url: 'https://api.localhost/hook', message: HOST },
    { url: 'https://metadata.google.internal/computeMetadata/v1/', message: HOST },
    { url: 'https://intranet/hook', message: HOST },
    { url: 'https://user:pass@hooks.example.com/', message: 'must not contain credentials' },
    { url: 'https://user@hooks.example.com/', message: 'must not contain credentials' },
    { url: 'http://hooks.example.com/', message: 'must be an https URL' },
    { url: 'https://127.0.0.1/hook', message: HOST },
  ])('webhookUrl $url is refused: $message', ({ url, message }) => {
    // Loopback http is about the scheme of http://127.0.0.1 only; it admits no other host.
    for (const loopback of [false, true]) {
      expect(batchErrors({ items: [valid], webhookUrl: url }, 1000, loopback)).toEqual([
        { path: '/webhookUrl', message },
      ]);
    }
  });

  it('admits private hosts only with allowPrivateHosts, and never credentials or plain http', () => {
    const opts = { allowPrivateHosts: true };
    expect(webhookUrlProblem('https://127.0.0.1:8443/hook', opts)).toBeNull();
    expect(webhookUrlProblem('https://localhost/hook', opts)).toBeNull();
    expect(webhookUrlProblem('https://10.0.0.5/hook', opts)).toBeNull();
    expect(webhookUrlProblem('https://0.0.0.0/hook', opts)).not.toBeNull();
    expect(webhookUrlProblem('https://[ff02::1]/hook', opts)).not.toBeNull();
    expect(webhookUrlProblem('https://u:p@10.0.0.5/hook', opts)).not.toBeNull();
    expect(webhookUrlProblem('http://10.0.0.5/hook', opts)).not.toBeNull();
  });

  it('rejects a webhookUrl that is not a string or is too long', () => {
    expect(batchErrors({ items: [valid], webhookUrl: 42 })).toEqual([
      { path: '/webhookUrl', message: 'must be string' },
    ]);
    expect(
      batchErrors({ items: [valid], webhookUrl: `https://hooks.example.com/${'a'.repeat(2048)}` }),
    ).toEqual([{ path: '/webhookUrl', message: 'must NOT have more than 2048 characters' }]);
  });

  it('accepts 1..maxItems items, worded alike for the schema and the plan, and prefixes item errors with their index', () => {
    expect(batchErrors({ items: [valid] })).toEqual([]);
    expect(batchErrors({ items: [] })).toEqual([
      { path: '/items', message: 'must NOT have fewer than 1 items' },
    ]);
    expect(batchErrors({ items: Array.from({ length: 1001 }, () => valid) })).toEqual([
      { path: '/items', message: 'must NOT have more than 1000 items' },
    ]);
    expect(batchErrors({ items: [valid, valid, valid] }, 2)).toEqual([
      { path: '/items', message: 'must NOT have more than 2 items' },
    ]);
    expect(batchErrors({ items: [valid, { ...valid, model: 'x' }], extra: 1 })).toEqual([
      { path: '/extra', message: 'is not an allowed field' },
      { path: '/items/1/model', message: 'is not an allowed field' },
    ]);
    expect(batchErrors({ items: [valid, { title: 't', severity: 'LOW' }] })).toEqual([
      { path: '/items/1/cveIds', message: 'must contain at least one CVE id unless description is given' },
    ]);
  });
});
