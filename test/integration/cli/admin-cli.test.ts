import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../helpers/db.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const KEV_SNAPSHOT = path.join(ROOT, 'data/kev/known_exploited_vulnerabilities.json.gz');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npm run admin -- …` as an operator runs it: its own process, only the given variables. */
function admin(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/admin.ts', ...args],
      { cwd: ROOT, timeout: 90_000, env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env } },
      (err, stdout, stderr) => {
        const code = err ? (err as { code?: unknown }).code : 0;
        resolve({ code: typeof code === 'number' ? code : -1, stdout, stderr });
      },
    );
  });
}

let db: { url: string; drop: () => Promise<void> };
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

async function count(sql: string): Promise<number> {
  const client = new pg.Client(db.url);
  await client.connect();
  try {
    return (await client.query<{ n: number }>(sql)).rows[0]!.n;
  } finally {
    await client.end();
  }
}

describe('admin CLI beside a running server (child processes)', { timeout: 180_000 }, () => {
  it('enrich runs on DATABASE_URL without KEY_PEPPER and loads the shipped KEV snapshot', async () => {
    const run = await admin(['enrich', '--kev', KEV_SNAPSHOT], { DATABASE_URL: db.url });
    expect(run.stderr).not.toMatch(/KEY_PEPPER/);
    expect(run.stdout).toMatch(
      /^kev: 1404 entries \(catalog 2025\.08\.25\) from known_exploited_vulnerabilities\.json\.gz in \d+\.\d s\n$/,
    );
    expect(run.code).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM kev_entries')).toBe(1404);
  });

  it('create-workspace still needs KEY_PEPPER with DATABASE_URL, and says so', async () => {
    const run = await admin(['create-workspace', '--name', 'Acme'], { DATABASE_URL: db.url });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('KEY_PEPPER: required when DATABASE_URL is set');
  });

  it('create-workspace uses the embedded database and pepper a running server recorded in DATA_DIR', async () => {
    // A server's record: its (live) process, its URL and port; the pepper it generated beside it.
    const dataDir = mkdtempSync(path.join(tmpdir(), 'admin-cli-'));
    const url = new URL(db.url);
    const record = { url: db.url, port: Number(url.port || 5432), pid: process.pid, startedAt: '' };
    writeFileSync(path.join(dataDir, 'postgres.json'), JSON.stringify(record));
    writeFileSync(path.join(dataDir, 'key-pepper'), 'p'.repeat(64));

    const before = await count('SELECT count(*)::int AS n FROM workspaces');
    const run = await admin(['create-workspace', '--name', 'Beside npm start', '--plan', 'free'], {
      DATA_DIR: dataDir,
    });
    expect(run.stderr).not.toMatch(/admin: /);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^workspace [0-9a-f-]{36}\nplan free\napi_key svc_[0-9A-Za-z]{38}\n$/);
    expect(await count('SELECT count(*)::int AS n FROM workspaces')).toBe(before + 1);
  });
});
