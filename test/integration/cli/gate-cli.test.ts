import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GateRecord } from '../../../src/domain/inhouse/gate.js';
import { forcedNonePartialFile, ROOT, SAMPLE_CSV, SAMPLE_THRESHOLDS_PATH, shippedModel } from './support.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the gate exactly as an operator would: a separate process through npx tsx. */
function gate(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      'npx',
      ['tsx', 'src/cli/gate.ts', ...args],
      { cwd: ROOT, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? -1) : 0;
        resolve({ code: typeof code === 'number' ? code : -1, stdout, stderr });
      },
    );
  });
}

function tmp(): string {
  return mkdtempSync(path.join(tmpdir(), 'inhouse-gate-cli-'));
}

function records(file: string): GateRecord[] {
  return (JSON.parse(readFileSync(file, 'utf8')) as { records: GateRecord[] }).records;
}

describe('gate CLI (child process)', { timeout: 120_000 }, () => {
  it('exits 0 and records a passing result for the exact shipped version', async () => {
    const record = path.join(tmp(), 'gate.json');
    const run = await gate(['--dataset', SAMPLE_CSV, '--config', SAMPLE_THRESHOLDS_PATH, '--record', record]);
    expect(run.stderr).not.toMatch(/gate:/);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('PASS');
    const [r] = records(record);
    expect(r).toMatchObject({
      modelVersion: shippedModel().version,
      datasetSha256: createHash('sha256').update(readFileSync(SAMPLE_CSV)).digest('hex'),
      passed: true,
    });
    expect(Date.parse(r?.evaluatedAt ?? '')).not.toBeNaN();
  });

  it('exits 1 and records the failure when the threshold is above what the model achieves', async () => {
    const dir = tmp();
    const config = path.join(dir, 'strict.json');
    writeFileSync(
      config,
      JSON.stringify({ ...JSON.parse(readFileSync(SAMPLE_THRESHOLDS_PATH, 'utf8')), minAgreement: 1 }),
    );
    const record = path.join(dir, 'gate.json');
    const run = await gate(['--dataset', SAMPLE_CSV, '--config', config, '--record', record]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/FAIL\n {2}- agreement \d+\.\d\d% < minAgreement 100\.00%/);
    expect(records(record)[0]?.passed).toBe(false);
  });

  it('exits 1 on KEV-floor violations of a model forced to none/partial without the floor', async () => {
    const dir = tmp();
    const model = path.join(dir, 'forced.json');
    writeFileSync(model, JSON.stringify(forcedNonePartialFile(false)));
    const run = await gate([
      '--dataset',
      SAMPLE_CSV,
      '--model',
      model,
      '--config',
      SAMPLE_THRESHOLDS_PATH,
      '--record',
      path.join(dir, 'g.json'),
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('KEV floor 6 violation(s) in 6 KEV row(s)');
    expect(run.stdout).toMatch(/- 6 KEV row\(s\) answered below HIGH \(CVE-/);
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
    const run = await gate([...args, '--record', path.join(tmp(), 'g.json')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
  });

  it('exits 2 on a CSV of the wrong format, a bad threshold file, or an edited model, and records nothing', async () => {
    const dir = tmp();
    const record = path.join(dir, 'g.json');
    const csv = path.join(dir, 'bad.csv');
    writeFileSync(
      csv,
      'cve,exploitation,automatable,technical_impact,in_kev,cvss_base,cvss_vector,description\nCVE-2024-0001,yes,no,partial,0,,,x\n',
    );
    const badCsv = await gate(['--dataset', csv, '--record', record]);
    expect(badCsv.code).toBe(2);
    expect(badCsv.stderr).toContain(
      `gate: dataset ${csv}: line 2: exploitation is "yes", expected none|poc|active`,
    );

    const config = path.join(dir, 'cfg.json');
    writeFileSync(config, JSON.stringify({ minAgreement: 0.9 }));
    const badConfig = await gate(['--dataset', SAMPLE_CSV, '--config', config, '--record', record]);
    expect(badConfig.code).toBe(2);
    expect(badConfig.stderr).toContain('gate: gate config');

    const model = path.join(dir, 'edited.json');
    const edited = forcedNonePartialFile(true);
    edited.body.heads.exploitation.bias = [0, 20, 0];
    writeFileSync(model, JSON.stringify(edited));
    const badModel = await gate(['--dataset', SAMPLE_CSV, '--model', model, '--record', record]);
    expect(badModel.code).toBe(2);
    expect(badModel.stderr).toMatch(/does not match its content/);
    expect(() => readFileSync(record)).toThrow();
  });
});
