import { execFile } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** What one run of `npm run gate` printed and how it ended. */
export interface GateRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the gate exactly as an operator would: its own process through npx tsx, with only the
 * given variables (DATABASE_URL says where it records). Never rejects: the exit code is checked.
 */
export function runGateCli(args: string[], env: Record<string, string>): Promise<GateRun> {
  return new Promise((resolve) => {
    execFile(
      'npx',
      ['tsx', 'src/cli/gate.ts', ...args],
      {
        cwd: ROOT,
        timeout: 60_000,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
      },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? -1) : 0;
        resolve({ code: typeof code === 'number' ? code : -1, stdout, stderr });
      },
    );
  });
}
