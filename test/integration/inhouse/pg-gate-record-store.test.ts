import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase } from '../../../src/db/orm.js';
import { createPool, type Pool } from '../../../src/db/pool.js';
import { gateConfigVersion, runGate } from '../../../src/domain/inhouse/gate.js';
import type { GateRecord } from '../../../src/domain/inhouse/gate.js';
import {
  GateRecordImportError,
  importGateRecords,
  readGateRecordFile,
} from '../../../src/domain/inhouse/gate-record-import.js';
import { PgGateRecordStore } from '../../../src/domain/inhouse/pg-gate-record-store.js';
import { createTestDatabase } from '../../helpers/db.js';
import { sampleRows, sampleThresholds, shippedModel } from '../../unit/inhouse/support.js';

/**
 * Gate records in PostgreSQL (docs/triage.md#in-house-model): one row per evaluation, history
 * kept, the latest evaluation of a version decides, whichever order the rows arrived in.
 */
let db: { url: string; drop: () => Promise<void> };
let pool: Pool;
let store: PgGateRecordStore;

beforeAll(async () => {
  db = await createTestDatabase();
  await migrateDatabase(db.url);
  pool = createPool(db.url, 2);
  store = new PgGateRecordStore(pool);
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const evaluated = runGate(shippedModel(), sampleRows(), sampleThresholds(), {
  sha256: 'a'.repeat(64),
  name: 'labelled-sample.csv',
});
const record = (version: string, passed: boolean, at: string): GateRecord => ({
  ...evaluated,
  modelVersion: version,
  passed,
  failures: passed ? [] : ['agreement 90.00% < minAgreement 93.00%'],
  evaluatedAt: at,
});

describe('PgGateRecordStore', () => {
  it('keeps every evaluation and returns the latest one for exactly the asked version', async () => {
    expect(await store.latestFor('sha256:v1')).toBeNull();
    await store.append(record('sha256:v1', true, '2026-11-21T10:00:00.000Z'));
    await store.append(record('sha256:v2', true, '2026-11-21T11:00:00.000Z'));
    await store.append(record('sha256:v1', false, '2026-11-21T12:00:00.000Z'));

    expect(await store.latestFor('sha256:v1')).toEqual(
      record('sha256:v1', false, '2026-11-21T12:00:00.000Z'),
    );
    expect(await store.latestFor('sha256:v2')).toEqual(record('sha256:v2', true, '2026-11-21T11:00:00.000Z'));
    expect(await store.latestFor('sha256:v3')).toBeNull();
    expect((await store.historyFor('sha256:v1')).map((r) => [r.evaluatedAt, r.passed])).toEqual([
      ['2026-11-21T12:00:00.000Z', false],
      ['2026-11-21T10:00:00.000Z', true],
    ]);
  });

  it('orders by evaluation time, so a record stored later but evaluated earlier does not decide', async () => {
    await store.append(record('sha256:v4', false, '2026-11-22T12:00:00.000Z'));
    await store.append(record('sha256:v4', true, '2026-11-22T08:00:00.000Z'));
    expect((await store.latestFor('sha256:v4'))?.passed).toBe(false);
  });

  it('stores the version of the thresholds the run applied beside the figures', async () => {
    await store.append(record('sha256:v5', true, '2026-11-23T10:00:00.000Z'));
    const { rows } = await pool.query(
      `SELECT gate_config_version, metrics->>'rows' AS rows, passed FROM inhouse_gate_records
        WHERE model_version = 'sha256:v5'`,
    );
    expect(rows).toEqual([
      { gate_config_version: gateConfigVersion(evaluated.thresholds), rows: '40', passed: true },
    ]);
    expect(gateConfigVersion(evaluated.thresholds)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('records the same evaluation once: insert says whether it was new', async () => {
    const r = record('sha256:v6', true, '2026-11-24T10:00:00.000Z');
    expect(await store.insert(r)).toBe(true);
    expect(await store.insert(r)).toBe(false);
    expect(await store.historyFor('sha256:v6')).toHaveLength(1);
  });
});

describe('importing a record file of an earlier release', () => {
  const fileWith = (content: unknown): string => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'gate-import-')), 'inhouse-gate.json');
    writeFileSync(file, JSON.stringify(content));
    return file;
  };

  it('copies every record with its evaluation time, and a second import copies none', async () => {
    const file = fileWith({
      records: [
        record('sha256:v7', false, '2026-11-20T10:00:00.000Z'),
        record('sha256:v7', true, '2026-11-20T11:00:00.000Z'),
      ],
    });
    const records = await readGateRecordFile(file);
    expect(await importGateRecords(records, store)).toBe(2);
    expect(await importGateRecords(records, store)).toBe(0);
    expect(await store.latestFor('sha256:v7')).toEqual(record('sha256:v7', true, '2026-11-20T11:00:00.000Z'));
  });

  it.each([
    ['a missing file', null, /^cannot read .*missing\.json: /],
    ['another shape', { something: 'else' }, /expected \{"records": \[\.\.\.\]\}/],
    [
      'a record without passed',
      { records: [{ ...record('sha256:v8', true, '2026-11-20T10:00:00.000Z'), passed: 'yes' }] },
      /^record 1: passed must be true or false$/,
    ],
    [
      'a record with a bad time',
      { records: [record('sha256:v8', true, 'yesterday')] },
      /^record 1: evaluatedAt must be an ISO 8601 time$/,
    ],
  ])('refuses %s and stores nothing', async (_name, content, message) => {
    const file = content === null ? path.join(tmpdir(), 'missing.json') : fileWith(content);
    const err = await readGateRecordFile(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GateRecordImportError);
    expect((err as Error).message).toMatch(message);
    expect(await store.latestFor('sha256:v8')).toBeNull();
  });
});
