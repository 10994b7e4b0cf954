import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { GENERATED_TYPES, typesOf } from './generate-types.js';

/**
 * The SDK can never drift from the API: its types are regenerated here from the running app's
 * OpenAPI document and must equal the committed ones. After a route schema changes, rerun with
 * `UPDATE_SDK_TYPES=1` and commit the file it writes.
 */
let t: TestApp;
let document: object;

beforeAll(async () => {
  t = await startTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  document = res.json();
});
afterAll(async () => {
  await t?.close();
});

describe('the SDK types', () => {
  it('equal the types generated from the running app’s /openapi.json', async () => {
    const fresh = await typesOf(document);
    if (process.env.UPDATE_SDK_TYPES === '1') writeFileSync(GENERATED_TYPES, fresh);
    const committed = readFileSync(GENERATED_TYPES, 'utf8');
    expect(
      committed === fresh,
      'packages/sdk/src/generated/openapi.ts differs from the API: regenerate it (packages/sdk/README.md#regenerating-the-types)',
    ).toBe(true);
  });

  it('notice a changed route schema', async () => {
    const changed = structuredClone(document) as { paths: Record<string, Record<string, unknown>> };
    const list = changed.paths['/api/v1/cases']!.get as { parameters: { name: string; schema: unknown }[] };
    const sort = list.parameters.find((p) => p.name === 'sort')!;
    sort.schema = { type: 'string', enum: ['severity'] };
    expect(await typesOf(changed)).not.toBe(await typesOf(document));
  });
});
