import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../../../../test/helpers/db.js';
import { signUp } from '../../../../test/helpers/test-app.js';
import { sarifValidator } from '../../../../test/helpers/export-schemas.js';
import { listenOnFreePort, startScanApp, type ScanTestApp } from '../../../../test/helpers/scan-app.js';
import { runCli } from '../../../../test/helpers/cli-process.js';
import { startTriageTestWorker } from '../../../../test/helpers/triage-setup.js';
import { cliFile as cliFileIn } from './cli-file.js';

/*
 * `scan upload --fail-on-priority` and `--sarif-out` as a CI job runs them: a child process
 * against the real service over real HTTP. Expected numbers come from the server's rows.
 */

interface JsonResult {
  scans: {
    scanId: string;
    failOnPriority?: { threshold: string; scope: string; cases: number } | null;
    sarif?: string | null;
  }[];
  exitCode: number;
}

describe('vuln-triage scan upload gates', () => {
  let t: ScanTestApp;
  let env: Record<string, string>;
  let dir: string;

  const cliFile = (name: string, findings: [string, string][]) => cliFileIn(dir, name, findings);

  /** Actionable cases the scan created at one of `priorities`, as the database has them. */
  const createdAtPriority = async (scanId: string, priorities: string[]): Promise<number> => {
    const { rows } = await t.infra.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM cases
        WHERE first_scan_id = $1 AND priority = ANY($2) AND status IN ('open', 'in_progress')`,
      [scanId, priorities],
    );
    return rows[0]!.n;
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cli-gates-'));
    t = await startScanApp({ redisUrl: testRedisUrl() || undefined });
    const port = await listenOnFreePort(t);
    const user = await signUp(t.app);
    env = {
      VULN_TRIAGE_URL: `http://127.0.0.1:${port}`,
      VULN_TRIAGE_API_KEY: user.key,
      VULN_TRIAGE_RETRIES: '1',
      VULN_TRIAGE_RETRY_BASE_MS: '50',
    };
  });
  afterAll(async () => {
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('--fail-on-priority counts the new cases triaged at or above it, and never an untriaged one', async () => {
    const findings: [string, string][] = [
      ['remote code execution in the login form', 'CRITICAL'],
      ['sql injection in the search box', 'HIGH'],
      ['verbose server banner', 'LOW'],
    ];
    const untriaged = await runCli(
      ['scan', 'upload', await cliFile('untriaged.json', findings), '--fail-on-priority', 'LOW', '--json'],
      { env },
    );
    expect(untriaged.stderr).toBe('');
    const plain = JSON.parse(untriaged.stdout) as JsonResult;
    expect(plain.scans[0]!.failOnPriority).toEqual({ threshold: 'LOW', scope: 'new', cases: 0 });
    expect(untriaged.code).toBe(0);

    const worker = startTriageTestWorker(t, {}, 4);
    try {
      const run = await runCli(
        [
          'scan',
          'upload',
          await cliFile('triaged.json', findings),
          '--triage',
          'new',
          '--fail-on-priority',
          'LOW',
          '--json',
          '--poll-interval',
          '200',
        ],
        { env },
      );
      expect(run.stderr).toBe('');
      const result = JSON.parse(run.stdout) as JsonResult;
      const scanId = result.scans[0]!.scanId;
      const expected = await createdAtPriority(scanId, ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW']);
      expect(expected).toBeGreaterThan(0);
      expect(result.scans[0]!.failOnPriority).toEqual({ threshold: 'LOW', scope: 'new', cases: expected });
      expect(run.code).toBe(1);
      expect(result.exitCode).toBe(1);

      const human = await runCli(
        [
          'scan',
          'upload',
          await cliFile('triaged.json', findings),
          '--triage',
          'new',
          '--fail-on-priority',
          'LOW',
        ],
        { env },
      );
      expect(human.code).toBe(1);
      expect(human.stdout).toContain(`(--fail-on-priority LOW)`);
      expect(human.stdout).toMatch(/new cases? at priority CRITICAL or HIGH or MEDIUM or LOW: failing/);
    } finally {
      await worker.close();
    }
  });

  it('refuses an unknown priority and --sarif-out with several files as usage errors', async () => {
    const file = await cliFile('usage.json', [['x', 'LOW']]);
    const bad = await runCli(['scan', 'upload', file, '--fail-on-priority', 'URGENT'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("argument 'URGENT' is invalid");
    const two = await runCli(['scan', 'upload', file, file, '--sarif-out', path.join(dir, 'x.sarif')], {
      env,
    });
    expect(two.code).toBe(2);
    expect(two.stderr).toContain('--sarif-out writes the cases of one scan: upload one file with it');
  });

  it("--sarif-out writes the scan's open cases as SARIF 2.1.0 that validates against the official schema", async () => {
    const out = path.join(dir, 'cases.sarif');
    const run = await runCli(
      [
        'scan',
        'upload',
        await cliFile('sarif.json', [
          ['remote code execution in the login form', 'CRITICAL'],
          ['open redirect', 'MEDIUM'],
          ['verbose server banner', 'LOW'],
        ]),
        '--sarif-out',
        out,
        '--json',
        '--poll-interval',
        '200',
      ],
      { env },
    );
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as JsonResult;
    expect(result.scans[0]!.sarif).toBe(out);
    const sarif = JSON.parse(await readFile(out, 'utf8')) as {
      version: string;
      runs: { results: unknown[] }[];
    };
    const validate = sarifValidator();
    validate(sarif);
    expect(validate.errors ?? []).toEqual([]);
    expect(sarif.version).toBe('2.1.0');
    const { rows } = await t.infra.pool.query<{ n: number }>(
      // The file's asset is its own: every case the scan sighted is one it created.
      `SELECT count(*)::int AS n FROM cases WHERE first_scan_id = $1 AND status IN ('open', 'in_progress')`,
      [result.scans[0]!.scanId],
    );
    expect(rows[0]!.n).toBe(3);
    expect(sarif.runs.flatMap((r) => r.results)).toHaveLength(rows[0]!.n);
  });
});
