import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase } from '../../../src/db/orm.js';
import { createPool, type Pool } from '../../../src/db/pool.js';
import type { GateRecord } from '../../../src/domain/inhouse/gate.js';
import { sha256Hex } from '../../../src/domain/inhouse/canonical-json.js';
import { parseLabelledDataset } from '../../../src/domain/inhouse/dataset.js';
import { PgGateRecordStore } from '../../../src/domain/inhouse/pg-gate-record-store.js';
import { DEFAULT_TRAIN_OPTIONS, trainInhouseModel } from '../../../src/domain/inhouse/train.js';
import { createTestDatabase } from '../../helpers/db.js';
import { runGateCli, type GateRun } from '../../helpers/gate-cli.js';
import {
  forcedNonePartialFile,
  ROOT,
  SAMPLE_CSV,
  SAMPLE_THRESHOLDS_PATH,
  shippedModel,
} from '../../unit/inhouse/support.js';

const TRAIN_SAMPLE_CSV = path.join(ROOT, 'test/fixtures/inhouse/labelled-train-sample.csv');

let db: { url: string; drop: () => Promise<void> };
let pool: Pool;
beforeAll(async () => {
  db = await createTestDatabase();
  await migrateDatabase(db.url);
  pool = createPool(db.url, 2);
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** `npm run gate` in its own process, recording in this file's database unless told otherwise. */
function gate(args: string[], env: Record<string, string> = { DATABASE_URL: db.url }): Promise<GateRun> {
  return runGateCli(args, env);
}

function tmp(): string {
  return mkdtempSync(path.join(tmpdir(), 'inhouse-gate-cli-'));
}

/** Every record of the shipped model version, newest first. */
function history(): Promise<GateRecord[]> {
  return new PgGateRecordStore(pool).historyFor(shippedModel().version);
}

async function rowCount(): Promise<number> {
  return (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM inhouse_gate_records')).rows[0]!.n;
}

describe('gate CLI (child process)', { timeout: 120_000 }, () => {
  it('exits 0 and records a passing result for the exact shipped version', async () => {
    const run = await gate(['--dataset', SAMPLE_CSV, '--config', SAMPLE_THRESHOLDS_PATH]);
    expect(run.stderr).not.toMatch(/gate:/);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('PASS');
    expect(run.stdout).toContain('scored    40 rows: all rows');
    expect(run.stdout).toContain('elevated recall     66.67% (min 60.00%)');
    expect(run.stdout).toContain('non-Track precision 75.00% (min 65.00%)');
    expect(run.stdout).toContain('SSVC outcome (labelled ↓, predicted →)');
    expect(run.stdout).toMatch(/^ {2}Track\* +1 +2 +0 +0$/m);
    expect(run.stdout).toContain('studies   not run: pass --training FILE');
    expect(run.stdout).toContain('recorded in the database (inhouse_gate_records)');
    const [r] = await history();
    expect(r).toMatchObject({
      modelVersion: shippedModel().version,
      datasetSha256: createHash('sha256').update(readFileSync(SAMPLE_CSV)).digest('hex'),
      passed: true,
    });
    expect(Date.parse(r?.evaluatedAt ?? '')).not.toBeNaN();
  });

  it('accepts another file of the training format, written differently, and scores it whole', async () => {
    // A benchmark set of its own: rows the shipped model was not trained on, columns in another
    // order, every field quoted, CRLF line ends and a byte-order mark.
    const rows = parseLabelledDataset(readFileSync(TRAIN_SAMPLE_CSV, 'utf8'));
    const q = (v: string): string => `"${v.replace(/"/g, '""')}"`;
    const lines = [
      [
        'description',
        'cve',
        'cvss_vector',
        'cvss_base',
        'in_kev',
        'technical_impact',
        'automatable',
        'exploitation',
      ],
      ...rows.map((r) => [
        r.description,
        r.cve,
        r.cvssVector ?? '',
        r.cvssScore === null ? '' : String(r.cvssScore),
        r.kev ? '1' : '0',
        r.technicalImpact,
        r.automatable,
        r.exploitation === 'public_poc' ? 'poc' : r.exploitation,
      ]),
    ];
    const file = path.join(tmp(), 'benchmark.csv');
    writeFileSync(file, `\ufeff${lines.map((l) => l.map(q).join(',')).join('\r\n')}\r\n`);
    const before = await rowCount();
    const run = await gate(['--dataset', file, '--config', SAMPLE_THRESHOLDS_PATH]);
    expect(run.stderr).not.toMatch(/gate:/);
    expect([0, 1]).toContain(run.code);
    expect(run.stdout).toContain(`scored    ${rows.length} rows: all rows`);
    expect(await rowCount()).toBe(before + 1);
    const [r] = await history();
    expect(r).toMatchObject({
      datasetSha256: createHash('sha256').update(readFileSync(file)).digest('hex'),
      datasetName: file,
    });
  });

  it('exits 1 and records the failure when the threshold is above what the model achieves', async () => {
    const dir = tmp();
    const config = path.join(dir, 'strict.json');
    writeFileSync(
      config,
      JSON.stringify({
        ...JSON.parse(readFileSync(SAMPLE_THRESHOLDS_PATH, 'utf8')),
        minAgreementOverBaseline: 1,
      }),
    );
    const run = await gate(['--dataset', SAMPLE_CSV, '--config', config]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      'FAIL\n  - agreement 92.50% is 15.00 points over the majority baseline 77.50% < minAgreementOverBaseline 100.00 points',
    );
    const [latest] = await history();
    expect(latest).toMatchObject({ passed: false, thresholds: { minAgreementOverBaseline: 1 } });
  });

  it('exits 1 on KEV-floor violations of a model forced to none/partial without the floor', async () => {
    const dir = tmp();
    const model = path.join(dir, 'forced.json');
    writeFileSync(model, JSON.stringify(forcedNonePartialFile(false)));
    const run = await gate(['--dataset', SAMPLE_CSV, '--model', model, '--config', SAMPLE_THRESHOLDS_PATH]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('KEV floor 6 violation(s) in 6 KEV row(s)');
    expect(run.stdout).toMatch(/- 6 KEV row\(s\) answered below HIGH \(CVE-/);
  });

  it('prints for machines the record, every confusion matrix and the split studies with --json', async () => {
    const dir = tmp();
    const text = readFileSync(TRAIN_SAMPLE_CSV, 'utf8');
    // The heads alone (no stacked stage): a model this small answers Track for every row.
    const options = { ...DEFAULT_TRAIN_OPTIONS, epochs: 3, minDf: 3, stackFolds: 0 };
    const { file } = trainInhouseModel(
      parseLabelledDataset(text),
      { datasetSha256: sha256Hex(text) },
      options,
    );
    const model = path.join(dir, 'small.json');
    writeFileSync(model, JSON.stringify(file));
    const run = await gate([
      '--dataset',
      TRAIN_SAMPLE_CSV,
      '--model',
      model,
      '--config',
      SAMPLE_THRESHOLDS_PATH,
      '--json',
    ]);
    expect(run.stderr).toBe('recorded in the database (inhouse_gate_records)\n');
    const out = JSON.parse(run.stdout) as Record<string, unknown> & {
      passed: boolean;
      metrics: Record<string, unknown>;
      studies: Record<string, Record<string, unknown>>;
    };
    expect(run.code).toBe(1);
    expect(out.failures).toContain('elevated recall 0.00% < minElevatedRecall 60.00%');
    expect(Object.keys(out).sort()).toEqual([
      'datasetName',
      'datasetSha256',
      'evaluatedAt',
      'failures',
      'metrics',
      'modelVersion',
      'passed',
      'studies',
      'thresholds',
    ]);
    expect(out.metrics).toMatchObject({
      datasetRows: 160,
      rows: 24,
      scope: "the model's training file: only its held-out random split (sha256(cve)[0:8] mod 100 < 20)",
      // Three epochs on 136 rows: a model that answers Track for everything, and the gate says so.
      elevatedRecall: 0,
      nonTrackPrecision: null,
      outcomeConfusion: { Track: { Track: expect.any(Number), 'Track*': expect.any(Number) } },
      pointConfusion: {
        exploitation: { none: { none: expect.any(Number), public_poc: expect.any(Number), active: 0 } },
        automatable: { no: { no: expect.any(Number), yes: expect.any(Number) } },
        technicalImpact: { partial: { partial: expect.any(Number), total: expect.any(Number) } },
      },
    });
    const split = {
      split: expect.any(String),
      trainRows: expect.any(Number),
      modelVersion: expect.stringMatching(/^sha256:/),
      metrics: expect.objectContaining({ rows: expect.any(Number), outcomeConfusion: expect.any(Object) }),
      withoutVerbatim: {
        dropped: expect.any(Number),
        metrics: expect.objectContaining({ rows: expect.any(Number) }),
      },
    };
    expect(out.studies).toEqual({
      trainingSha256: sha256Hex(text),
      randomSplit: { ...split, trainRows: 136, modelVersion: file.version },
      timeOrdered: { ...split, split: 'newest 20% by CVE year and number', trainRows: 128 },
      underTestWithoutVerbatim: {
        dropped: expect.any(Number),
        metrics: expect.objectContaining({ rows: expect.any(Number) }),
      },
    });
  });

  it('exits 2 when --training is not the file the model was trained on', async () => {
    const run = await gate(['--dataset', SAMPLE_CSV, '--training', TRAIN_SAMPLE_CSV]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^gate: training file .*labelled-train-sample\.csv is not the file the model was trained on/m,
    );
  });

  it.each([
    ['no --dataset', [], /gate: --dataset FILE is required/],
    [
      'a missing file',
      ['--dataset', '/nonexistent/x.csv'],
      /gate: cannot read dataset \/nonexistent\/x\.csv/,
    ],
    ['an unknown flag', ['--dataset', SAMPLE_CSV, '--treshold', '1'], /gate: Unknown option '--treshold'/],
  ])('exits 2 with a clear message on %s', async (_name, args, message) => {
    const run = await gate(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
  });

  it('exits 2 on a CSV of the wrong format, a bad threshold file, or an edited model, and records nothing', async () => {
    const dir = tmp();
    const before = await rowCount();
    const csv = path.join(dir, 'bad.csv');
    writeFileSync(
      csv,
      'cve,exploitation,automatable,technical_impact,in_kev,cvss_base,cvss_vector,description\nCVE-2024-0001,yes,no,partial,0,,,x\n',
    );
    const badCsv = await gate(['--dataset', csv]);
    expect(badCsv.code).toBe(2);
    expect(badCsv.stderr).toContain(
      `gate: dataset ${csv}: line 2: exploitation is "yes", expected none|poc|active`,
    );

    const config = path.join(dir, 'cfg.json');
    writeFileSync(config, JSON.stringify({ minAgreement: 0.9 }));
    const badConfig = await gate(['--dataset', SAMPLE_CSV, '--config', config]);
    expect(badConfig.code).toBe(2);
    expect(badConfig.stderr).toContain('gate: gate config');

    const model = path.join(dir, 'edited.json');
    const edited = forcedNonePartialFile(true);
    edited.body.heads.exploitation.bias = [0, 20, 0];
    writeFileSync(model, JSON.stringify(edited));
    const badModel = await gate(['--dataset', SAMPLE_CSV, '--model', model]);
    expect(badModel.code).toBe(2);
    expect(badModel.stderr).toMatch(/does not match its content/);
    expect(await rowCount()).toBe(before);
  });

  it('exits 2 naming the database it cannot reach, after evaluating, and records nothing', async () => {
    const before = await rowCount();
    const url = new URL(db.url);
    url.pathname = '/no_such_database_for_the_gate';
    const run = await gate(['--dataset', SAMPLE_CSV, '--config', SAMPLE_THRESHOLDS_PATH], {
      DATABASE_URL: url.toString(),
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^gate: no database to record in: .*no_such_database_for_the_gate/m);
    expect(run.stderr).not.toContain('usage:');
    expect(await rowCount()).toBe(before);
  });

  it('imports the record file of an earlier release once, keeping evaluation times', async () => {
    const dir = tmp();
    const file = path.join(dir, 'inhouse-gate.json');
    const old: GateRecord = { ...(await history())[0]!, evaluatedAt: '2026-01-01T00:00:00.000Z' };
    writeFileSync(file, JSON.stringify({ records: [old] }));
    const first = await gate(['--import', file]);
    expect(first.stderr).toBe('');
    expect(first.stdout).toBe(`imported 1 of 1 record(s) from ${file} (0 already recorded)\n`);
    expect(first.code).toBe(0);
    const again = await gate(['--import', file]);
    expect(again.stdout).toBe(`imported 0 of 1 record(s) from ${file} (1 already recorded)\n`);
    expect((await history()).at(-1)).toEqual(old);
  });

  it('exits 2 on a record file of the wrong shape and imports nothing', async () => {
    const before = await rowCount();
    const file = path.join(tmp(), 'inhouse-gate.json');
    writeFileSync(file, JSON.stringify({ records: [{ modelVersion: 'sha256:x', passed: 'yes' }] }));
    const run = await gate(['--import', file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('gate: record 1: datasetSha256 must be a string\n');
    expect(await rowCount()).toBe(before);
  });
});
