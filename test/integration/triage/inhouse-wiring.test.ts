import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';

/**
 * The in-house model as the service wires it (docs/triage.md#in-house-model): in shadow (answers stored beside
 * the served one, never returned) until a passing gate record for its exact version exists AND
 * the operator enabled it; then it serves the routine tier, named like every model.
 */
const version = (JSON.parse(readFileSync('config/inhouse-model.json', 'utf8')) as { version: string })
  .version;
const opened: TestApp[] = [];
afterAll(async () => {
  for (const t of opened) await t.close();
});

function dataDir(passed: boolean | null): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'inhouse-wiring-'));
  if (passed !== null) {
    const record = {
      modelVersion: version,
      datasetSha256: '0'.repeat(64),
      datasetName: 'test',
      thresholds: {},
      metrics: { kevFloorViolations: 0 },
      passed,
      failures: [],
      evaluatedAt: '2026-11-21T00:00:00.000Z',
    };
    writeFileSync(path.join(dir, 'inhouse-gate.json'), JSON.stringify({ records: [record] }));
  }
  return dir;
}

async function triageOnce(env: Record<string, string>) {
  const t = await startTestApp({ env });
  opened.push(t);
  const s = await signUp(t.app);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/triage',
    headers: { 'x-api-key': s.key },
    payload: { title: 'Weak TLS cipher', severity: 'LOW', description: 'TLS 1.0 on an internal host' },
  });
  expect(res.statusCode, res.body).toBe(200);
  const shadow = await t.infra.pool.query(
    `SELECT s.engine, s.model_version FROM triage_shadow_answers s JOIN triage_results r ON r.id = s.triage_result_id
      WHERE r.workspace_id = $1`,
    [s.workspaceId],
  );
  return { model: res.json().model as string, shadow: shadow.rows };
}

describe('in-house model wiring', () => {
  it.each([
    { case: 'enabled, no gate record', passed: null, enabled: 'true' },
    { case: 'enabled, gate failed', passed: false, enabled: 'true' },
    { case: 'gate passed, not enabled', passed: true, enabled: 'false' },
  ])('stays in shadow when $case', async ({ passed, enabled }) => {
    const r = await triageOnce({ DATA_DIR: dataDir(passed), INHOUSE_ENABLED: enabled });
    expect(r.model).toMatch(/^local:/);
    expect(r.shadow).toEqual([{ engine: 'inhouse', model_version: version }]);
  });

  it('serves the routine tier once its gate passed and the operator enabled it', async () => {
    const r = await triageOnce({ DATA_DIR: dataDir(true), INHOUSE_ENABLED: 'true' });
    expect(r.model).toBe(`inhouse:${version.replace('sha256:', 'sha256-')}`);
    expect(r.model).toMatch(/^[a-z][a-z0-9-]*:[A-Za-z0-9._-]+$/); // docs/triage.md#request-and-answer: <provider>:<model_name>
    expect(r.shadow).toEqual([]);
  });
});
