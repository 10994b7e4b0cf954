import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../../src/lib/config.js';
import { createTestDatabase, testRedisUrl, testS3Env } from '../../helpers/db.js';
import { TEST_PEPPER } from '../../helpers/test-app.js';

/*
 * The deployment files (docs/deploy.md) cannot be run here: no container engine. What can be
 * proved is proved: every variable compose.yaml sets is one the configuration reads (a renamed
 * variable fails this test), and the Dockerfile's own steps, executed as written in a folder per
 * stage, build a runtime that migrates, serves /healthz to its HEALTHCHECK and parses an upload
 * through a separate worker on the suite's PostgreSQL, Redis and S3 with the compose file's
 * environment.
 */

const root = path.resolve('.');
const compose = parseYaml(readFileSync(path.join(root, 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, { build?: string; command?: string[]; environment?: Record<string, string> }>;
};
const ours = Object.entries(compose.services).filter(([, s]) => s.build === '.');

/** Every variable `loadConfig` reads, recorded from the names it asks for. */
function variablesTheConfigReads(): Set<string> {
  const names = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get(_t, name) {
      if (typeof name === 'string') names.add(name);
      return undefined;
    },
  });
  loadConfig(env);
  return names;
}
/** Passed through to the providers untouched (docs/configuration.md#triage). */
const PROVIDER_ENV = /^(OPENAI|ANTHROPIC|TRIAGE|PROVIDER)_/;

describe('compose.yaml', () => {
  it('runs migrate once, then two web processes and a worker, all from the image', () => {
    expect(ours.map(([name]) => name).sort()).toEqual(['migrate', 'web', 'worker']);
    expect(compose.services.web!.command).toEqual([
      'node',
      '--max-semi-space-size=64',
      '--min-semi-space-size=16',
      '--no-allocation-site-pretenuring',
      'dist/src/main.js',
      'web',
    ]);
    expect(compose.services.worker!.command).toEqual(['node', 'dist/src/main.js', 'worker']);
    expect(compose.services.migrate!.command).toEqual(['node', 'dist/src/cli/migrate.js']);
    expect(compose.services.web).toMatchObject({
      deploy: { replicas: 2 },
      depends_on: { migrate: { condition: 'service_completed_successfully' } },
    });
  });

  it('sets only variables the configuration reads', () => {
    const known = variablesTheConfigReads();
    for (const [name, service] of ours)
      for (const variable of Object.keys(service.environment ?? {}))
        expect(known.has(variable) || PROVIDER_ENV.test(variable), `${name}: ${variable}`).toBe(true);
  });

  it('.env.example lists exactly the variables the configuration reads', () => {
    const listed = new Set(
      [...readFileSync(path.join(root, '.env.example'), 'utf8').matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map(
        (m) => m[1]!,
      ),
    );
    const known = [...variablesTheConfigReads()].filter((v) => /^[A-Z][A-Z0-9_]*$/.test(v));
    expect(known.filter((v) => !listed.has(v))).toEqual([]);
    expect([...listed].filter((v) => !known.includes(v) && !PROVIDER_ENV.test(v))).toEqual([]);
  });
});

interface Stage {
  name: string;
  workdir: string;
  env: Record<string, string>;
  steps: { kind: 'COPY' | 'RUN'; args: string }[];
  cmd: string[] | null;
  healthcheck: string[] | null;
}

/** The Dockerfile's stages, with the instructions this test executes. */
function readDockerfile(): Stage[] {
  const lines = readFileSync(path.join(root, 'Dockerfile'), 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => l.trim() && !l.trim().startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op, rest] = /^(\w+)\s+(.*)$/.exec(line.trim())!;
    const stage = stages[stages.length - 1]!;
    if (op === 'FROM') {
      stages.push({
        name: /AS (\w+)/i.exec(rest!)![1]!,
        workdir: '/',
        env: {},
        steps: [],
        cmd: null,
        healthcheck: null,
      });
    } else if (op === 'WORKDIR') stage.workdir = rest!;
    else if (op === 'ENV') for (const [, k, v] of rest!.matchAll(/(\w+)=(\S+)/g)) stage.env[k!] = v!;
    else if (op === 'COPY' || op === 'RUN') stage.steps.push({ kind: op, args: rest! });
    else if (op === 'CMD') stage.cmd = JSON.parse(rest!) as string[];
    else if (op === 'HEALTHCHECK')
      stage.healthcheck = JSON.parse(/CMD (\[.*\])$/.exec(rest!)![1]!) as string[];
  }
  return stages;
}

const work = mkdtempSync(path.join(tmpdir(), 'image-'));
const processes: ChildProcess[] = [];
const drops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const p of processes) p.kill('SIGKILL');
  for (const d of drops) await d();
  rmSync(work, { recursive: true, force: true });
  // Killing the processes, dropping a database and removing a built image's node_modules: slow on a loaded machine.
}, 120_000);

/** Runs the stages' COPY and RUN steps as the builder would, each stage in its own folder. */
function buildStages(stages: Stage[]): Map<string, string> {
  const dirs = new Map<string, string>();
  for (const stage of stages) {
    const stageRoot = path.join(work, stage.name);
    const cwd = path.join(stageRoot, stage.workdir);
    mkdirSync(cwd, { recursive: true });
    dirs.set(stage.name, stageRoot);
    for (const step of stage.steps) {
      if (step.kind === 'RUN') {
        const r = spawnSync('sh', ['-c', step.args], {
          cwd,
          env: { ...process.env, ...stage.env },
          encoding: 'utf8',
        });
        expect(r.status, `${stage.name}: RUN ${step.args}\n${r.stderr}`).toBe(0);
        continue;
      }
      const from = /^--from=(\w+)\s+/.exec(step.args);
      const parts = step.args.replace(/^--from=\w+\s+/, '').split(/\s+/);
      const dest = path.resolve(cwd, parts.pop()!);
      for (const src of parts) {
        const source = from ? path.join(dirs.get(from[1]!)!, src) : path.join(root, src);
        expect(existsSync(source), `${stage.name}: COPY ${src}`).toBe(true);
        const target = parts.length > 1 || dest.endsWith('/') ? path.join(dest, path.basename(src)) : dest;
        mkdirSync(path.dirname(target), { recursive: true });
        cpSync(source, target, { recursive: true });
      }
    }
  }
  return dirs;
}

const logs = new Map<string, string>();

function start(cwd: string, command: string[], env: Record<string, string>, name: string): ChildProcess {
  const child = spawn(command[0]!, command.slice(1), { cwd, env: { PATH: process.env.PATH!, ...env } });
  let log = '';
  const add = (d: Buffer) => logs.set(name, (log += d.toString()));
  child.stdout!.on('data', add);
  child.stderr!.on('data', add);
  child.on('exit', (code) => {
    if (code !== 0 && code !== null) console.error(`[${name}] exited ${code}:\n${log.slice(-3000)}`);
  });
  processes.push(child);
  return child;
}

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

describe('the Dockerfile, step by step', () => {
  const s3 = testS3Env('deploy artifacts');
  it.skipIf(s3 === null)(
    'builds a runtime that migrates, answers its HEALTHCHECK and parses an upload through a worker',
    async () => {
      const stages = readDockerfile();
      expect(stages.map((s) => s.name)).toEqual(['build', 'runtime']);
      const runtime = stages[1]!;
      const dirs = buildStages(stages);
      const app = path.join(dirs.get('runtime')!, runtime.workdir);
      // Production dependencies only: no test runner, no linter.
      expect(existsSync(path.join(app, 'node_modules/vitest'))).toBe(false);
      expect(existsSync(path.join(app, 'node_modules/eslint'))).toBe(false);

      const db = await createTestDatabase();
      drops.push(db.drop);
      const redisUrl = testRedisUrl();
      const port = 20_000 + Math.floor(Math.random() * 20_000);
      // The compose file's environment, its service names resolved to the suite's servers.
      const composed = (service: string): Record<string, string> => {
        const env: Record<string, string> = { ...runtime.env };
        for (const [k, v] of Object.entries(compose.services[service]!.environment ?? {})) env[k] = String(v);
        Object.assign(env, {
          DATABASE_URL: db.url,
          KEY_PEPPER: TEST_PEPPER,
          ...s3,
          PORT: String(port),
          PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
          DATA_DIR: mkdtempSync(path.join(work, `data-${service}-`)),
        });
        if (redisUrl) env.REDIS_URL = redisUrl;
        else delete env.REDIS_URL;
        return env;
      };

      const migrate = spawnSync(
        compose.services.migrate!.command![0]!,
        compose.services.migrate!.command!.slice(1),
        {
          cwd: app,
          env: { PATH: process.env.PATH!, ...composed('migrate') },
          encoding: 'utf8',
        },
      );
      expect(migrate.status, migrate.stderr).toBe(0);

      expect(runtime.cmd).toEqual(compose.services.web!.command);
      start(app, runtime.cmd!, composed('web'), 'web');
      start(app, compose.services.worker!.command!, composed('worker'), 'worker');
      const healthy = () =>
        new Promise<boolean>((resolve) => {
          const probe = spawn(runtime.healthcheck![0]!, runtime.healthcheck!.slice(1), {
            env: { PATH: process.env.PATH!, PORT: String(port) },
          });
          probe.on('exit', (code) => resolve(code === 0));
        });
      expect(await waitFor(healthy, 90_000)).toBe(true);

      const base = `http://127.0.0.1:${port}`;
      const signup = await fetch(`${base}/api/console/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          email: 'ops@example.com',
          password: 'correct horse battery staple',
          workspaceName: 'Image',
          plan: 'trial',
        }),
      });
      expect(signup.status).toBe(201);
      const { revealUrl } = (await signup.json()) as { revealUrl: string };
      const cookie = signup.headers.get('set-cookie')!.split(';')[0]!;
      const { key } = (await (
        await fetch(`${base}/api/console${revealUrl}`, { headers: { cookie } })
      ).json()) as { key: string };
      const upload = await fetch(`${base}/api/pipeline/scan`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/xml' },
        body: readFileSync(path.join(root, 'test/fixtures/scans/nessus/nessus_v_unknown.xml')),
      });
      expect(upload.status).toBe(202);
      const { statusUrl } = (await upload.json()) as { statusUrl: string };
      let status = '';
      expect(
        await waitFor(async () => {
          status = (
            (await (await fetch(`${base}${statusUrl}`, { headers: { 'x-api-key': key } })).json()) as {
              status: string;
            }
          ).status;
          return status === 'completed' || status === 'failed';
        }, 240_000),
        `scan still ${status}; worker said:\n${(logs.get('worker') ?? '').slice(-3000)}`,
      ).toBe(true);
      expect(status).toBe('completed');
    },
    600_000,
  );
});
