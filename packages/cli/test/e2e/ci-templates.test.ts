import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { signUp } from '../../../../test/helpers/test-app.js';
import { listenOnFreePort, startScanApp, type ScanTestApp } from '../../../../test/helpers/scan-app.js';
import { CLI_BIN } from '../../../../test/helpers/cli-process.js';

/*
 * The GitHub Action (action.yml) and the GitLab CI template run as scripts against the real
 * service, no runner needed: `vuln-triage` on PATH is this repository's CLI, and `npm install -g`
 * of the published package is stubbed out (the templates' only other step).
 */

const root = path.resolve('.');
const FIXTURE = path.resolve('test/fixtures/parsers/nessus-edge.nessus');

interface ActionStep {
  id?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
}
interface Action {
  inputs: Record<string, { required?: boolean; default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: ActionStep[] };
}

let t: ScanTestApp;
let dir: string;
let bin: string;
let env: Record<string, string>;

beforeAll(async () => {
  t = await startScanApp();
  const port = await listenOnFreePort(t);
  const user = await signUp(t.app);
  dir = mkdtempSync(path.join(tmpdir(), 'ci-templates-'));
  bin = path.join(dir, 'bin');
  mkdirSync(bin);
  symlinkSync(CLI_BIN, path.join(bin, 'vuln-triage'));
  writeFileSync(path.join(bin, 'npm'), '#!/bin/sh\necho "npm $*" >> "$NPM_LOG"\n');
  chmodSync(path.join(bin, 'npm'), 0o755);
  env = {
    PATH: `${bin}:${process.env.PATH}`,
    HOME: process.env.HOME ?? dir,
    NPM_LOG: path.join(dir, 'npm.log'),
    VULN_TRIAGE_URL: `http://127.0.0.1:${port}`,
    VULN_TRIAGE_API_KEY: user.key,
    VULN_TRIAGE_RETRY_BASE_MS: '50',
  };
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs a shell script as a CI runner would, without blocking this process: the scan worker that
 * parses the upload runs in it.
 */
function sh(
  shell: string,
  args: string[],
  options: { env: Record<string, string> },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(shell, args, { cwd: dir, env: options.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** The action's upload step, with `${{ inputs.x }}` and `${{ github.action_path }}` substituted. */
async function runAction(
  action: Action,
  given: Record<string, string>,
): Promise<{ code: number; outputs: Record<string, string> }> {
  const inputs: Record<string, string> = {
    url: env.VULN_TRIAGE_URL!,
    'api-key': env.VULN_TRIAGE_API_KEY!,
    ...given,
  };
  const step = action.runs.steps.find((s) => s.id === 'upload')!;
  const expand = (v: string) =>
    v
      .replace(
        /\$\{\{\s*inputs\.([\w-]+)\s*\}\}/g,
        (_, k: string) => inputs[k] ?? action.inputs[k]?.default ?? '',
      )
      .replace(/\$\{\{\s*github\.action_path\s*\}\}/g, root);
  const outputFile = path.join(dir, `github-output-${Math.random().toString(36).slice(2)}`);
  writeFileSync(outputFile, '');
  const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(v)]));
  const r = await sh('bash', ['-c', expand(step.run!)], {
    env: { ...env, ...stepEnv, GITHUB_OUTPUT: outputFile },
  });
  const outputs = Object.fromEntries(
    readFileSync(outputFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  return { code: r.status ?? -1, outputs };
}

describe('the GitHub Action', () => {
  const action = parse(readFileSync(path.join(root, 'action.yml'), 'utf8')) as Action;

  it('installs the published CLI, passes every input to the upload step and maps every output', () => {
    expect(action.runs.using).toBe('composite');
    expect(action.runs.steps.map((s) => s.run ?? s.uses).join('\n')).toContain(
      'npm install -g "@vuln-triage/cli@${{ inputs.cli-version }}"',
    );
    const step = action.runs.steps.find((s) => s.id === 'upload')!;
    const passed = Object.values(step.env ?? {}).join(' ');
    for (const name of Object.keys(action.inputs).filter((n) => n !== 'cli-version')) {
      expect(passed, `input ${name}`).toContain(`inputs.${name} }}`);
    }
    expect(step.env!.VULN_TRIAGE_API_KEY).toBe('${{ inputs.api-key }}');
    expect(step.run).not.toContain('api-key');
    for (const [name, output] of Object.entries(action.outputs)) {
      expect(output.value).toBe(`\${{ steps.upload.outputs.${name} }}`);
    }
  });

  it('uploads, waits, writes SARIF and sets its outputs from what the service counted', async () => {
    const sarif = path.join(dir, 'cases.sarif');
    const { code, outputs } = await runAction(action, {
      file: FIXTURE,
      asset: 'action-host',
      'sarif-out': sarif,
    });
    expect(code).toBe(0);
    const scan = (
      await t.app.inject({
        method: 'GET',
        url: `/api/pipeline/scan/${outputs['scan-id']}`,
        headers: { 'x-api-key': env.VULN_TRIAGE_API_KEY! },
      })
    ).json() as { status: string; counts: { findings: number; new: number; duplicate: number } };
    expect(scan.status).toBe('completed');
    expect(outputs).toEqual({
      'scan-id': expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'completed',
      findings: String(scan.counts.findings),
      'new-cases': String(scan.counts.new),
      duplicates: String(scan.counts.duplicate),
      'failing-cases': '',
      'failing-priority-cases': '',
      'sarif-file': sarif,
      'exit-code': '0',
    });
    expect(existsSync(sarif)).toBe(true);
  });

  it('fails the step with exit 1 and the count when the fail-on threshold is met', async () => {
    // Findings on an asset of their own: every case is new, so the gate counts them all.
    const file = path.join(dir, 'gate.json');
    writeFileSync(
      file,
      JSON.stringify({
        tool: { name: 'action-test', version: '1' },
        findings: [{ title: 'weak cipher', severity: 'MEDIUM', cveIds: [], asset: 'action-gate-host' }],
      }),
    );
    const { code, outputs } = await runAction(action, { file, 'fail-on': 'LOW' });
    expect(outputs['failing-cases']).toBe('1');
    expect(outputs['exit-code']).toBe('1');
    expect(code).toBe(1);
  });
});

describe('the GitLab CI template', () => {
  it('installs the published CLI and uploads with the variables a job sets', async () => {
    const template = parse(readFileSync(path.join(root, 'ci/gitlab/vuln-triage.yml'), 'utf8')) as Record<
      string,
      { variables: Record<string, string>; script: string[] }
    >;
    const job = template['.vuln-triage']!;
    const sarif = path.join(dir, 'gitlab.sarif');
    const variables = {
      ...job.variables,
      VULN_TRIAGE_FILE: FIXTURE,
      VULN_TRIAGE_ASSET: 'gitlab-host',
      VULN_TRIAGE_SARIF_OUT: sarif,
      VULN_TRIAGE_FAIL_ON: 'CRITICAL',
    };
    const r = await sh('sh', ['-ec', job.script.join('\n')], { env: { ...env, ...variables } });
    expect(readFileSync(env.NPM_LOG!, 'utf8')).toContain('npm install -g @vuln-triage/cli@0.1.0');
    expect(r.stderr).toContain('uploaded as scan');
    expect([0, 1]).toContain(r.status);
    expect(r.stdout).toMatch(/case.* at CRITICAL: (failing|passing)/);
    expect(existsSync(sarif)).toBe(true);
  });
});
