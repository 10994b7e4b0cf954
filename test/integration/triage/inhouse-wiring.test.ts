import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateDatabase } from '../../../src/db/orm.js';
import { createPool } from '../../../src/db/pool.js';
import { parseGateThresholds } from '../../../src/domain/inhouse/gate.js';
import type { GateRecord } from '../../../src/domain/inhouse/gate.js';
import { PgGateRecordStore } from '../../../src/domain/inhouse/pg-gate-record-store.js';
import { createTestDatabase } from '../../helpers/db.js';
import { runGateCli } from '../../helpers/gate-cli.js';
import { startTestApp, signUp, type TestApp } from '../../helpers/test-app.js';
import { INHOUSE_MODEL_PATH, readInhouseModelJson } from '../../../src/domain/inhouse/model-file.js';

/**
 * The in-house model as the service wires it (docs/triage.md#in-house-model): in shadow (answers stored beside
 * the served one, never returned) until a passing gate record for its exact version is in the
 * database AND the operator enabled it; then it serves the routine tier, named like every model.
 */
const ROOT = path.resolve(import.meta.dirname, '../../..');
const SAMPLE_CSV = path.join(ROOT, 'test/fixtures/inhouse/labelled-sample.csv');
const SAMPLE_THRESHOLDS = path.join(ROOT, 'test/fixtures/inhouse/gate-thresholds-sample.json');
const version = (readInhouseModelJson(path.join(ROOT, INHOUSE_MODEL_PATH)) as { version: string }).version;
const SERVING = `inhouse:${version.replace('sha256:', 'sha256-')}`;

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

function gateRecord(passed: boolean): GateRecord {
  return {
    modelVersion: version,
    datasetSha256: '0'.repeat(64),
    datasetName: 'test',
    thresholds: parseGateThresholds(JSON.parse(readFileSync(SAMPLE_THRESHOLDS, 'utf8'))),
    metrics: { kevFloorViolations: 0 } as GateRecord['metrics'],
    passed,
    failures: [],
    evaluatedAt: '2026-11-21T00:00:00.000Z',
  };
}

/** A migrated database of its own, dropped after the file. */
async function database(): Promise<string> {
  const db = await createTestDatabase();
  cleanups.push(db.drop);
  await migrateDatabase(db.url);
  return db.url;
}

async function withRecord(passed: boolean | null): Promise<string> {
  const url = await database();
  if (passed !== null) {
    const pool = createPool(url, 1);
    try {
      await new PgGateRecordStore(pool).append(gateRecord(passed));
    } finally {
      await pool.end();
    }
  }
  return url;
}

/** A freshly built app on `databaseUrl` answers one triage: which model served, what ran in shadow. */
async function triageOnce(databaseUrl: string, env: Record<string, string>) {
  const t: TestApp = await startTestApp({
    databaseUrl,
    env: { DATA_DIR: mkdtempSync(path.join(tmpdir(), 'inhouse-wiring-')), ...env },
  });
  cleanups.push(t.close);
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
  return { model: res.json().model as string, shadow: shadow.rows, logs: t.logs.join('') };
}

describe('in-house model wiring', () => {
  it.each([
    { case: 'enabled, no gate record', passed: null, enabled: 'true' },
    { case: 'enabled, gate failed', passed: false, enabled: 'true' },
    { case: 'gate passed, not enabled', passed: true, enabled: 'false' },
  ])('stays in shadow when $case', async ({ passed, enabled }) => {
    const r = await triageOnce(await withRecord(passed), { INHOUSE_ENABLED: enabled });
    expect(r.model).toMatch(/^local:/);
    expect(r.shadow).toEqual([{ engine: 'inhouse', model_version: version }]);
  });

  it('serves the routine tier once its gate passed and the operator enabled it', async () => {
    const r = await triageOnce(await withRecord(true), { INHOUSE_ENABLED: 'true' });
    expect(r.model).toBe(SERVING);
    expect(r.model).toMatch(/^[a-z][a-z0-9-]*:[A-Za-z0-9._-]+$/); // docs/triage.md#request-and-answer: <provider>:<model_name>
    expect(r.shadow).toEqual([]);
  });

  it(
    'honours in a freshly built app the latest record `npm run gate` wrote from another process',
    { timeout: 180_000 },
    async () => {
      const url = await database();
      const pass = await runGateCli(['--dataset', SAMPLE_CSV, '--config', SAMPLE_THRESHOLDS], {
        DATABASE_URL: url,
      });
      expect(pass.code, pass.stderr).toBe(0);
      expect((await triageOnce(url, { INHOUSE_ENABLED: 'true' })).model).toBe(SERVING);

      const strict = path.join(mkdtempSync(path.join(tmpdir(), 'inhouse-wiring-')), 'strict.json');
      writeFileSync(
        strict,
        JSON.stringify({
          ...JSON.parse(readFileSync(SAMPLE_THRESHOLDS, 'utf8')),
          minAgreementOverBaseline: 1,
        }),
      );
      const fail = await runGateCli(['--dataset', SAMPLE_CSV, '--config', strict], { DATABASE_URL: url });
      expect(fail.code, fail.stderr).toBe(1);
      const after = await triageOnce(url, { INHOUSE_ENABLED: 'true' });
      expect(after.model).toMatch(/^local:/);
      expect(after.shadow).toEqual([{ engine: 'inhouse', model_version: version }]);
    },
  );

  it('does not read a record file of an earlier release in DATA_DIR, and says how to import it', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'inhouse-wiring-'));
    writeFileSync(path.join(dataDir, 'inhouse-gate.json'), JSON.stringify({ records: [gateRecord(true)] }));
    const r = await triageOnce(await withRecord(null), { DATA_DIR: dataDir, INHOUSE_ENABLED: 'true' });
    expect(r.model).toMatch(/^local:/);
    expect(r.logs).toContain('npm run gate -- --import FILE');
    expect(r.logs).toContain(path.join(dataDir, 'inhouse-gate.json'));
  });
});
