import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestApp, type TestApp } from '../../helpers/test-app.js';
import { openapiPath, type OpenApiDocument } from '../../helpers/openapi.js';
import { isDocumentedUrl, registeredRoutes } from '../../../src/api/plugins/openapi.js';

/**
 * The OpenAPI 3.1 document (docs/api.md#reference): valid, complete, and every route in it has response
 * schemas. This is the guard for new routes: a route under `/api/` (or an operational endpoint)
 * without a 2xx response schema, or whose errors are not problem documents, fails here.
 */
let t: TestApp;
let doc: OpenApiDocument;

beforeAll(async () => {
  t = await startTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  doc = res.json();
});
afterAll(async () => {
  await t?.close();
});

const documentedRoutes = () =>
  registeredRoutes(t.app).filter((r) => isDocumentedUrl(r.url) && r.schema?.hide !== true);

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(doc as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('lists every API route, each with a response schema for success', () => {
    const routes = documentedRoutes();
    // The API as first documented (docs/api.md#reference): new routes only add to it.
    expect(routes.length).toBeGreaterThanOrEqual(40);
    const missing: string[] = [];
    for (const r of routes) {
      const op = doc.paths[openapiPath(r.url)]?.[r.method.toLowerCase()];
      const response = (r.schema?.response ?? {}) as Record<string, unknown>;
      const success = Object.keys(response).filter((s) => /^2/.test(s));
      if (!op) missing.push(`${r.method} ${r.url}: not in the document`);
      else if (success.length === 0) missing.push(`${r.method} ${r.url}: no 2xx response schema`);
    }
    expect(missing).toEqual([]);
    const inDoc = Object.values(doc.paths).flatMap((p) => Object.keys(p)).length;
    expect(inDoc).toBe(routes.length);
  });

  it('describes every error as the shared problem document, with 401 and 403 on every key route', () => {
    const wrong: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method.toUpperCase()} ${path}`;
        const statuses = Object.keys(op.responses);
        if (!statuses.some((s) => /^5/.test(s)) && path !== '/healthz' && path !== '/metrics')
          wrong.push(`${where}: no 5xx documented`);
        for (const [status, r] of Object.entries(op.responses)) {
          if (!/^[45]/.test(status)) continue;
          const schema = r.content?.['application/problem+json']?.schema as { $ref?: string } | undefined;
          if (schema?.$ref !== '#/components/schemas/Problem' || Object.keys(r.content!).length !== 1)
            wrong.push(`${where} ${status}: not a problem document`);
          if (!/`[a-z_]+`/.test(r.description)) wrong.push(`${where} ${status}: names no error code`);
        }
        if (op.security?.some((s) => 'apiKey' in s)) {
          for (const s of ['401', '403', '429'])
            if (!op.responses[s]) wrong.push(`${where}: key route without ${s}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(doc.components.schemas?.Problem).toMatchObject({
      type: 'object',
      required: ['type', 'title', 'status', 'code', 'detail', 'requestId'],
    });
  });

  it('names the security of each surface: X-API-Key, the console cookie, the metrics bearer token', () => {
    expect(doc.components.securitySchemes).toEqual({
      apiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
      consoleSession: expect.objectContaining({ type: 'apiKey', in: 'cookie', name: 'svc_session' }),
      metricsToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(doc.paths['/api/v1/triage']?.post?.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths['/api/pipeline/scan']?.post?.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths['/api/console/keys']?.get?.security).toEqual([{ consoleSession: [] }]);
    expect(doc.paths['/api/console/login']?.post?.security).toEqual([]);
    expect(doc.paths['/metrics']?.get?.security).toEqual([{ metricsToken: [] }, {}]);
    expect(doc.paths['/healthz']?.get?.security).toEqual([]);
  });

  it('documents the scan upload body and examples for triage, batch and upload', () => {
    const upload = doc.paths['/api/pipeline/scan']!.post! as unknown as {
      requestBody: { content: Record<string, unknown> };
      responses: Record<string, { content: Record<string, { example?: unknown }> }>;
    };
    expect(Object.keys(upload.requestBody.content)).toEqual(
      expect.arrayContaining([
        'application/xml',
        'application/json',
        'application/gzip',
        'multipart/form-data',
      ]),
    );
    expect(upload.responses['202']!.content['application/json']!.example).toMatchObject({ status: 'queued' });
    const json = JSON.stringify([doc.paths['/api/v1/triage'], doc.paths['/api/v1/triage/batch']]);
    expect(json).toContain('CVE-2021-44228');
    expect(json).toContain('PATCH_IMMEDIATELY');
  });

  it('leaves the browser pages, the docs UI and the queue dashboard out', () => {
    const paths = Object.keys(doc.paths);
    expect(paths.every((p) => isDocumentedUrl(p.replace(/\{(\w+)\}/g, ':$1')))).toBe(true);
    expect(paths).not.toContain('/openapi.json');
  });
});
