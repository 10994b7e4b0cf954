import { spawn } from 'node:child_process';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { TEST_PEPPER } from '../helpers/test-app.js';

/*
 * Creating a database is `npm start`'s embedded mode alone: with DATABASE_URL, a database that
 * does not exist (a mistyped name) is a start-up error naming it, not a new empty database the
 * service starts on (docs/operations.md#failure-behaviour).
 */

/** Runs `src/main.ts web` to its exit, with a hard bound; its exit code and output. */
function runToExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'web'], {
      env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn', REDIS_URL: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += String(d)));
    child.stderr.on('data', (d) => (output += String(d)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`still running after 90 s:\n${output}`));
    }, 90_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('a DATABASE_URL naming a database that does not exist', () => {
  it(
    'refuses to start, names the database, shows no secret and creates nothing',
    { timeout: 120_000 },
    async () => {
      const name = `t_typo_${Date.now().toString(36)}`;
      const url = new URL(inject('pgAdminUrl'));
      url.pathname = `/${name}`;
      url.password = 'sekrit-password-123';
      const { code, output } = await runToExit({ DATABASE_URL: url.toString(), KEY_PEPPER: TEST_PEPPER });
      expect(code).toBe(1);
      expect(output).toContain(`database "${name}" does not exist on ${url.hostname}:${url.port || '5432'}`);
      expect(output).not.toContain('sekrit-password-123');
      const admin = new pg.Client(inject('pgAdminUrl'));
      await admin.connect();
      try {
        const { rowCount } = await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [name]);
        expect(rowCount).toBe(0);
      } finally {
        await admin.end();
      }
    },
  );
});
