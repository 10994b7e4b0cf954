import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadInhouseModel } from '../../../src/domain/inhouse/model.js';
import { ROOT, SAMPLE_CSV } from './support.js';

function train(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'npx',
      ['tsx', 'src/cli/train-inhouse.ts', ...args],
      { cwd: ROOT, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (err as { code?: number }).code : 0;
        resolve({ code: typeof code === 'number' ? code : -1, stdout, stderr });
      },
    );
  });
}

describe('train-inhouse CLI (child process)', { timeout: 120_000 }, () => {
  it('writes a loadable model whose version it prints, and the same file twice', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'inhouse-train-'));
    // The sample is all validation-slice rows, so hold nothing out here.
    const args = ['--dataset', SAMPLE_CSV, '--epochs', '3', '--min-df', '2', '--validation-percent', '0'];
    const a = await train([...args, '--out', path.join(dir, 'a.json')]);
    const b = await train([...args, '--out', path.join(dir, 'b.json')]);
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    const fileA = readFileSync(path.join(dir, 'a.json'), 'utf8');
    expect(fileA).toBe(readFileSync(path.join(dir, 'b.json'), 'utf8'));
    const model = loadInhouseModel(JSON.parse(fileA));
    expect(model.body.stack?.boosters.exploitation.trees.length).toBeGreaterThan(0);
    expect(a.stdout).toContain(`version ${model.version}`);
    expect(a.stdout).toMatch(/validation: rows \d+, SSVC agreement/);
  });

  it('exits 2 without a dataset', async () => {
    const run = await train([]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('train-inhouse: --dataset FILE is required');
  });
});
