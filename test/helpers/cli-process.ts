import { execFile } from 'node:child_process';
import path from 'node:path';

/** What one run of the `vuln-triage` command printed and how it ended. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export const CLI_BIN = path.resolve('packages/cli/bin/vuln-triage.js');

/** The parent's environment without anything that would steer the CLI (its own variables, colour forcing). */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('VULN_TRIAGE_') || k === 'FORCE_COLOR' || k === 'NO_COLOR') continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

/**
 * Runs `packages/cli/bin/vuln-triage.js` as a child process (stdout and stderr are pipes, not terminals),
 * the way a CI job runs it, and resolves with its exit code and output. Never rejects on a
 * non-zero exit: the exit code is what the tests check.
 */
export function runCli(
  args: string[],
  options: { env?: Record<string, string>; input?: string; timeoutMs?: number } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [CLI_BIN, ...args],
      { env: cleanEnv(options.env ?? {}), timeout: options.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        if (code === null) return reject(new Error(`vuln-triage did not exit: ${String(err)}\n${stderr}`));
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(options.input ?? '');
  });
}

/**
 * Runs the CLI under a pseudo-terminal (util-linux `script`), so stdout and stderr are TTYs as
 * in a person's shell; resolves with everything the terminal received.
 */
export function runCliInTerminal(
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliRun> {
  const quoted = [process.execPath, CLI_BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) => {
    execFile(
      'script',
      ['-qfec', quoted, '/dev/null'],
      {
        env: cleanEnv({ COLUMNS: '120', LINES: '40', TERM: 'xterm-256color', ...options.env }),
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        if (code === null) return reject(new Error(`script did not exit: ${String(err)}\n${stderr}`));
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Any ANSI escape sequence (colours, cursor moves, line clears). */
// eslint-disable-next-line no-control-regex
export const ANSI_ESCAPE = /\u001b\[/;
