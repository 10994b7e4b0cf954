import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../../../test/helpers/test-app.js';
import {
  listenOnFreePort,
  startScanApp,
  waitForScan,
  type ScanTestApp,
} from '../../../../test/helpers/scan-app.js';
import { ANSI_ESCAPE, runCli } from '../../../../test/helpers/cli-process.js';
import { EXPORT_QUEUE, exportProcessor, type ExportPayload } from '../../../../src/jobs/export-job.js';

/*
 * `vuln-triage triage`, `cases list`, `usage` and `export cases` as child processes against the
 * real service (triage answers from the local SSVC engine: no provider is configured).
 */

describe('vuln-triage triage, cases, usage and export', () => {
  let t: ScanTestApp;
  let env: Record<string, string>;
  let key: string;
  let dir: string;
  let scanId: string;
  let exportWorker: { close(): Promise<void> } | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cli-cmd-'));
    t = await startScanApp({ env: { EXPORT_SYNC_MAX_ROWS: '1' } });
    exportWorker = t.infra.queues.worker<ExportPayload, void>(EXPORT_QUEUE, exportProcessor(t.deps.exports));
    const port = await listenOnFreePort(t);
    key = (await signUp(t.app)).key;
    env = { VULN_TRIAGE_URL: `http://127.0.0.1:${port}`, VULN_TRIAGE_API_KEY: key, VULN_TRIAGE_RETRIES: '0' };
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/pipeline/scan',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload: JSON.stringify({
        tool: { name: 't', version: '1' },
        findings: [
          {
            title: 'Log4Shell in billing',
            severity: 'CRITICAL',
            cveIds: ['CVE-2021-44228'],
            asset: 'billing-api',
          },
          { title: 'Banner disclosure', severity: 'LOW', cveIds: [], asset: 'web-01' },
        ],
      }),
    });
    scanId = (res.json() as { scanId: string }).scanId;
    expect((await waitForScan(t.app, key, scanId)).status).toBe('completed');
  });
  afterAll(async () => {
    await exportWorker?.close();
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('triages from flags, from a JSON file and from stdin, for people and as JSON', async () => {
    const human = await runCli(
      [
        'triage',
        '--cve',
        'CVE-2021-44228',
        '--title',
        'Log4Shell in billing-api',
        '--severity',
        'critical',
        '--cvss',
        '10',
      ],
      { env },
    );
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      /^Priority +(CRITICAL|HIGH|MEDIUM|LOW)\nAction +[A-Z_]+\nConfidence +\d\.\d\d\n/,
    );
    expect(human.stdout).toMatch(/\nModel +\S+\n/);
    expect(human.stdout).not.toMatch(ANSI_ESCAPE);

    const body = { cveIds: ['CVE-2021-44228'], title: 'Log4Shell', severity: 'CRITICAL' };
    const file = path.join(dir, 'finding.json');
    await writeFile(file, JSON.stringify(body));
    const fromFile = await runCli(['triage', '--file', file, '--json'], { env });
    expect(fromFile.code).toBe(0);
    const answer = JSON.parse(fromFile.stdout) as Record<string, unknown>;
    expect(Object.keys(answer)).toEqual(
      expect.arrayContaining(['priority', 'recommendedAction', 'reasoning', 'model']),
    );

    const fromStdin = await runCli(['triage', '--file', '-', '--json'], { env, input: JSON.stringify(body) });
    expect(fromStdin.code).toBe(0);
    expect((JSON.parse(fromStdin.stdout) as { priority: string }).priority).toBe(answer.priority);
  });

  it('exits 2 with every invalid field the server names, and 2 for missing flags', async () => {
    const file = path.join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ title: 'x', severity: 'SEVERE', model: 'gpt' }));
    const run = await runCli(['triage', '--file', file], { env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('[400 invalid_request]');
    expect(run.stderr).toMatch(/\n {2}\/severity: /);
    expect(run.stderr).toMatch(/\n {2}\/model: /);
    expect(run.stderr).toMatch(/\n {2}request id: \S+/);

    const missing = await runCli(['triage', '--cve', 'CVE-2021-44228'], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('triage needs --title and --severity');
  });

  it('lists cases as a table and as the list envelope, with filters', async () => {
    const table = await runCli(['cases', 'list', '--scan', scanId], { env });
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]!.split(/\s{2,}/)).toEqual([
      'ID',
      'SEVERITY',
      'STATUS',
      'SEEN',
      'LAST SEEN',
      'ASSET',
      'CVE',
      'TITLE',
    ]);
    expect(lines).toHaveLength(3);
    expect(table.stdout).toMatch(
      /CRITICAL +open +1 +\d{4}-\d\d-\d\d +billing-api +CVE-2021-44228 +Log4Shell in billing/,
    );

    const json = await runCli(['cases', 'list', '--severity', 'critical', '--json'], { env });
    expect(json.code).toBe(0);
    const list = JSON.parse(json.stdout) as { object: string; data: { title: string }[]; nextCursor: null };
    expect(list.object).toBe('list');
    expect(list.data.map((c) => c.title)).toEqual(['Log4Shell in billing']);

    const paged = await runCli(['cases', 'list', '--limit', '1'], { env });
    expect(paged.stdout).toMatch(/More: --cursor \S+ \(or --all\)/);
    const all = await runCli(['cases', 'list', '--limit', '1', '--all', '--json'], { env });
    expect((JSON.parse(all.stdout) as { data: unknown[] }).data).toHaveLength(2);

    const bad = await runCli(['cases', 'list', '--status', 'closed'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/\n {2}\/querystring\/status: must be one or more of open, /);
  });

  it("shows the key's usage and the workspace's remaining AI calls", async () => {
    const run = await runCli(['usage'], { env });
    expect(run.code).toBe(0);
    const server = (
      await t.app.inject({ method: 'GET', url: '/api/v1/usage', headers: { 'x-api-key': key } })
    ).json() as {
      workspace: { plan: string; aiCallLimit: number; aiCallsThisMonth: number; aiCallsRemaining: number };
    };
    const w = server.workspace;
    expect(run.stdout).toContain(
      `Plan ${w.plan}: ${w.aiCallsThisMonth.toLocaleString('en-US')} AI calls used this month, ${w.aiCallsRemaining.toLocaleString('en-US')} of ${w.aiCallLimit.toLocaleString('en-US')} remaining`,
    );
    const json = await runCli(['usage', '--json'], { env });
    const report = JSON.parse(json.stdout) as typeof server;
    // Requests move with every call (this one included); the AI-call figures do not.
    const calls = (x: typeof w) => [x.plan, x.aiCallLimit, x.aiCallsThisMonth, x.aiCallsRemaining];
    expect(calls(report.workspace)).toEqual(calls(w));
  });

  it('exports cases to a file, streaming small exports and following a job for large ones', async () => {
    const small = path.join(dir, 'critical.csv');
    const direct = await runCli(
      ['export', 'cases', '--format', 'csv', '--severity', 'critical', '--scan', scanId, '-o', small],
      { env },
    );
    expect(direct.code, direct.stderr).toBe(0);
    const rows = (await readFile(small, 'utf8')).trim().split('\r\n');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain('Log4Shell in billing');

    // Two cases with EXPORT_SYNC_MAX_ROWS=1: the server answers 413 and the client runs a job.
    const large = path.join(dir, 'all.jsonl');
    const job = await runCli(['export', 'cases', '--format', 'jsonl', '-o', large], { env });
    expect(job.code, job.stderr).toBe(0);
    expect(job.stderr).toMatch(/Large export: rendering it as job [0-9a-f-]{36}/);
    const lines = (await readFile(large, 'utf8')).trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { title: string }).title).sort()).toEqual([
      'Banner disclosure',
      'Log4Shell in billing',
    ]);
    const bad = await runCli(['export', 'cases', '--format', 'pdf'], { env });
    expect(bad.code).toBe(2);
  });
});
