import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../../../../test/helpers/db.js';
import { signUp } from '../../../../test/helpers/test-app.js';
import {
  listenOnFreePort,
  scanCount,
  startScanApp,
  type ScanTestApp,
} from '../../../../test/helpers/scan-app.js';
import { ANSI_ESCAPE, runCli, runCliInTerminal } from '../../../../test/helpers/cli-process.js';
import { startTriageTestWorker } from '../../../../test/helpers/triage-setup.js';
import { cliFile as cliFileIn } from './cli-file.js';

/** A scan's answer when its upload asked for triage (`--triage`). */
interface ScanWithTriage {
  triage: { status: string; requested: number; answered: number; byPriority: Record<string, number> } | null;
}

/*
 * `vuln-triage scan upload` as a CI job runs it: a child process (pipes, not a terminal)
 * against the real service over real HTTP, with the scan worker parsing in this process.
 * Expected numbers come from the server's own answers and rows, never from the CLI's code.
 */

const FIXTURES = path.resolve('test/fixtures/parsers');
const LIMIT = 1024 * 1024;

/** The format each fixture is, by its name (what content detection must find). */
const formatOf = (file: string): string =>
  file.startsWith('cli-')
    ? 'cli'
    : file.startsWith('cyclonedx')
      ? 'cyclonedx'
      : file.startsWith('sarif')
        ? 'sarif'
        : file.split('-')[0]!;

interface JsonResult {
  scans: {
    file: string;
    scanId: string;
    scan: {
      status: string;
      format: string;
      counts: { findings: number; new: number; duplicate: number; bySeverity: Record<string, number> };
    };
    failOn: { threshold: string; scope: string; cases: number } | null;
  }[];
  exitCode: number;
}

describe('vuln-triage scan upload', () => {
  let t: ScanTestApp;
  let env: Record<string, string>;
  let workspaceId: string;
  let dir: string;

  const cliFile = (name: string, findings: [string, string][]) => cliFileIn(dir, name, findings);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cli-e2e-'));
    t = await startScanApp({ redisUrl: testRedisUrl() || undefined, env: { SCAN_MAX_BYTES: String(LIMIT) } });
    const port = await listenOnFreePort(t);
    const user = await signUp(t.app);
    workspaceId = user.workspaceId;
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

  it(
    'with --triage new, --wait also waits for the triage and the summary counts the cases by priority',
    { timeout: 120_000 },
    async () => {
      const worker = startTriageTestWorker(t, {}, 4);
      try {
        const file = await cliFile('triaged.json', [
          ['remote code execution in the login form', 'CRITICAL'],
          ['verbose server banner', 'LOW'],
        ]);
        const run = await runCli(
          ['scan', 'upload', file, '--triage', 'new', '--wait', '--json', '--poll-interval', '200'],
          { env },
        );
        expect(run.stderr).toBe('');
        expect(run.code).toBe(0);
        const scan = (JSON.parse(run.stdout) as { scans: { scanId: string; scan: ScanWithTriage }[] })
          .scans[0]!;
        expect(scan.scan.triage).toMatchObject({ status: 'completed', requested: 2, answered: 2 });
        const { rows } = await t.infra.pool.query<{ priority: string; n: number }>(
          `SELECT priority, count(*)::int AS n FROM cases WHERE first_scan_id = $1 GROUP BY priority`,
          [scan.scanId],
        );
        expect(scan.scan.triage!.byPriority).toEqual(Object.fromEntries(rows.map((r) => [r.priority, r.n])));

        const human = await runCli(
          [
            'scan',
            'upload',
            await cliFile('triaged-2.json', [['open redirect', 'MEDIUM']]),
            '--triage',
            'new',
            '--wait',
          ],
          { env },
        );
        expect(human.code).toBe(0);
        expect(human.stdout).toContain('By priority');
      } finally {
        await worker.close();
      }
    },
  );

  it(
    'uploads every fixture format with --wait and reports what the server counted',
    { timeout: 120_000 },
    async () => {
      const files = (await readdir(FIXTURES)).sort();
      const run = await runCli(
        [
          'scan',
          'upload',
          ...files.map((f) => path.join(FIXTURES, f)),
          '--wait',
          '--json',
          '--poll-interval',
          '200',
        ],
        { env },
      );
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const out = JSON.parse(run.stdout) as JsonResult;
      expect(out.exitCode).toBe(0);
      expect(out.scans.map((s) => path.basename(s.file))).toEqual(files);
      for (const s of out.scans) {
        const server = await t.app.inject({
          method: 'GET',
          url: `/api/pipeline/scan/${s.scanId}`,
          headers: { 'x-api-key': env.VULN_TRIAGE_API_KEY! },
        });
        const view = server.json() as JsonResult['scans'][number]['scan'];
        expect({ file: path.basename(s.file), status: view.status, format: view.format }).toEqual({
          file: path.basename(s.file),
          status: 'completed',
          format: formatOf(path.basename(s.file)),
        });
        expect(s.scan.counts).toEqual(view.counts);
        const { rows } = await t.infra.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM findings WHERE scan_id = $1`,
          [s.scanId],
        );
        expect(s.scan.counts.findings).toBe(rows[0]!.n);
      }
      expect(out.scans.reduce((n, s) => n + s.scan.counts.findings, 0)).toBeGreaterThan(0);
    },
  );

  it('prints a summary table without escape codes when stdout is not a terminal', async () => {
    const file = await cliFile('table.json', [
      ['critical thing', 'critical'],
      ['high thing', 'high'],
      ['low thing', 'low'],
    ]);
    const run = await runCli(['scan', 'upload', file, '--wait', '--poll-interval', '200'], { env });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(ANSI_ESCAPE);
    expect(run.stderr).not.toMatch(ANSI_ESCAPE);
    const lines = run.stdout.split('\n');
    expect(lines[0]!.split(/\s{2,}/)).toEqual([
      'FILE',
      'STATUS',
      'FORMAT',
      'SIZE',
      'FINDINGS',
      'NEW CASES',
      'DUPLICATES',
      'CRITICAL',
      'HIGH',
      'MEDIUM',
      'LOW',
      'INFO',
    ]);
    expect(lines[1]!.split(/\s{2,}/)).toEqual([
      file,
      'completed',
      'cli',
      expect.stringMatching(/ B$/),
      '3',
      '3',
      '0',
      '1',
      '1',
      '0',
      '1',
      '0',
    ]);
    expect(run.stderr).toMatch(/^table\.json: uploaded as scan [0-9a-f-]{36}\n$/);
  });

  it(
    'exits 1 when the scan creates a case at or above --fail-on, 0 when not, and --fail-on-all counts old ones',
    { timeout: 90_000 },
    async () => {
      const critical = await cliFile('gate-critical.json', [
        ['sql injection', 'critical'],
        ['weak tls', 'medium'],
      ]);
      const fails = await runCli(
        ['scan', 'upload', critical, '--fail-on', 'CRITICAL', '--json', '--poll-interval', '200'],
        { env },
      );
      expect(fails.code).toBe(1);
      expect((JSON.parse(fails.stdout) as JsonResult).scans[0]!.failOn).toEqual({
        threshold: 'CRITICAL',
        scope: 'new',
        cases: 1,
      });

      const passes = await runCli(
        [
          'scan',
          'upload',
          critical,
          '--name',
          'second run',
          '--fail-on',
          'CRITICAL',
          '--poll-interval',
          '200',
        ],
        { env },
      );
      // The same findings again under another name: a second scan, but its cases are duplicates, not new.
      expect(passes.code).toBe(0);
      expect(passes.stdout).toContain('gate-critical.json: no new cases at CRITICAL: passing');

      const all = await runCli(
        [
          'scan',
          'upload',
          critical,
          '--name',
          'third run',
          '--fail-on',
          'MEDIUM',
          '--fail-on-all',
          '--poll-interval',
          '200',
        ],
        { env },
      );
      expect(all.code).toBe(1);
      expect(all.stdout).toContain('2 open cases at CRITICAL or HIGH or MEDIUM: failing (--fail-on MEDIUM)');

      const low = await cliFile('gate-low.json', [['banner', 'low']]);
      const lowRun = await runCli(['scan', 'upload', low, '--fail-on', 'HIGH', '--poll-interval', '200'], {
        env,
      });
      expect(lowRun.code).toBe(0);
    },
  );

  it('re-running the same upload gets the same scan back and stores no second one', async () => {
    const file = await cliFile('rerun.json', [['rerun finding', 'high']]);
    const first = await runCli(['scan', 'upload', file, '--json'], { env });
    expect(first.code).toBe(0);
    const before = await scanCount(t, workspaceId);
    const again = await runCli(['scan', 'upload', file, '--json', '--gzip'], { env });
    expect(again.code).toBe(0);
    const id = (r: { stdout: string }) => (JSON.parse(r.stdout) as JsonResult).scans[0]!.scanId;
    expect(id(again)).toBe(id(first));
    expect(await scanCount(t, workspaceId)).toBe(before);
    // Another asset is another scan: the options are part of the Idempotency-Key.
    const other = await runCli(['scan', 'upload', file, '--json', '--asset', 'billing-api'], { env });
    expect(id(other)).not.toBe(id(first));
    expect(await scanCount(t, workspaceId)).toBe(before + 1);
  });

  it('--no-resolve-missing uploads with resolveMissing=false (docs/ingestion.md#rescans)', async () => {
    const file = await cliFile('no-resolve.json', [['kept open', 'high']]);
    const run = await runCli(['scan', 'upload', file, '--json', '--no-resolve-missing'], { env });
    expect(run.code).toBe(0);
    const scanId = (JSON.parse(run.stdout) as JsonResult).scans[0]!.scanId;
    const { rows } = await t.infra.pool.query<{ resolve_missing: boolean }>(
      `SELECT resolve_missing FROM scans WHERE id = $1`,
      [scanId],
    );
    expect(rows[0]!.resolve_missing).toBe(false);
    const plain = await runCli(['scan', 'upload', await cliFile('resolve.json', [['x', 'high']]), '--json'], {
      env,
    });
    const plainId = (JSON.parse(plain.stdout) as JsonResult).scans[0]!.scanId;
    const { rows: on } = await t.infra.pool.query<{ resolve_missing: boolean }>(
      `SELECT resolve_missing FROM scans WHERE id = $1`,
      [plainId],
    );
    expect(on[0]!.resolve_missing).toBe(true);
  });

  it('exits 3 with the line and column when the file is broken', async () => {
    const text = await readFile(path.join(FIXTURES, 'nessus-edge.nessus'), 'utf8');
    const broken = path.join(dir, 'broken.nessus');
    // Cut inside the first ReportItem and close the document: the parser stops at a mismatched tag.
    await writeFile(
      broken,
      `${text.slice(0, text.indexOf('<cwe>79'))}</ReportHost></Report></NessusClientData_v2>\n`,
    );
    const run = await runCli(['scan', 'upload', broken, '--wait', '--poll-interval', '200'], { env });
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(
      /error: .*broken\.nessus: scan [0-9a-f-]{36} failed: .*line \d+, column \d+.* \[unparseable_scan\]/,
    );
    // The location is named once, not repeated after the parser's own message.
    expect(run.stderr.match(/line \d+, column \d+/g)).toHaveLength(1);
  });

  it('exits 4 with the problem detail when the file is over the plan limit (413)', async () => {
    const big = path.join(dir, 'big.json');
    await writeFile(big, Buffer.alloc(LIMIT + 4096, 0x20));
    const run = await runCli(['scan', 'upload', big], { env });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain(
      `The scan is larger than your plan allows (${LIMIT} bytes). [413 payload_too_large]`,
    );
    // The 413 itself is never retried. The server closes the connection mid-body, so the write
    // can fail (EPIPE/ECONNRESET) before the answer is read: that connection error alone may be
    // retried once, and the retry then reads the 413.
    const retries = run.stderr.split('\n').filter((l) => l.includes('retrying'));
    expect(retries.length).toBeLessThanOrEqual(1);
    for (const line of retries) expect(line).toMatch(/^Could not reach .*: (EPIPE|ECONNRESET); retrying/);
  });

  it('exits 4 with the detail of a refused key, without retrying', async () => {
    const file = await cliFile('refused.json', [['x', 'low']]);
    const run = await runCli(['scan', 'upload', file], {
      env: { ...env, VULN_TRIAGE_API_KEY: 'svc_notarealkeynotarealkeynotarealkey00000' },
    });
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/error: .*refused\.json: .* \[401 invalid_api_key\]/);
    expect(run.stderr).not.toContain('retrying');
  });

  it('exits 2 for a usage error and 4 after retrying an unreachable server', async () => {
    const file = await cliFile('usage.json', [['x', 'low']]);
    const bad = await runCli(['scan', 'upload', file, '--fail-on', 'SEVERE'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("error: option '--fail-on <severity>' argument 'SEVERE' is invalid");
    const missing = await runCli(['scan', 'upload', path.join(dir, 'nope.json')], { env });
    expect(missing.code).toBe(2);
    const down = await runCli(['scan', 'upload', file], {
      env: { ...env, VULN_TRIAGE_URL: 'http://127.0.0.1:9' },
    });
    expect(down.code).toBe(4);
    expect(down.stderr).toContain('Could not reach http://127.0.0.1:9: ECONNREFUSED; retrying in');
    expect(down.stderr).toContain('error: ');
    expect(down.stderr).toContain('(gave up after 2 tries)');
  });

  it('draws the upload and parse bars in a terminal', { timeout: 90_000 }, async () => {
    const file = await cliFile(
      'terminal.json',
      Array.from({ length: 2000 }, (_, i): [string, string] => [`finding ${i} ${'x'.repeat(60)}`, 'medium']),
    );
    const run = await runCliInTerminal(['scan', 'upload', file, '--wait', '--poll-interval', '100'], { env });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /Uploading terminal\.json \[[█░]+\] 100% \| [\d.]+ KiB\/[\d.]+ KiB \| [\d.]+ (?:B|KiB|MiB)\/s \| ETA \d+s/,
    );
    expect(run.stdout).toMatch(
      /Parsing {3}terminal\.json \[[█░]+\] 100% \| [\d.]+ KiB\/[\d.]+ KiB \| 2,000 findings/,
    );
    // On a terminal the summary's severity headers are coloured.
    expect(run.stdout).toMatch(ANSI_ESCAPE);
    const noColour = await runCliInTerminal(['scan', 'upload', file, '--wait', '--quiet'], {
      env: { ...env, NO_COLOR: '1' },
    });
    expect(noColour.code).toBe(0);
    expect(noColour.stdout).not.toMatch(ANSI_ESCAPE);
  });
});
