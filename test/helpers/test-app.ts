import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/lib/config.js';
import { createLogger } from '../../src/lib/logger.js';
import type { Infrastructure } from '../../src/app/infrastructure.js';
import type { Services } from '../../src/app/services.js';
import { assembleApp, type AppOptions } from '../../src/app/lifecycle.js';
import { createTestDatabase } from './db.js';
import { createTestClock, type TestClock } from './clock.js';
import { FIRST_KEY_SCOPES } from '../../src/domain/keys/scopes.js';

export const TEST_PEPPER = 'test-pepper-'.padEnd(48, 'x');

export interface TestApp {
  app: FastifyInstance;
  deps: Services;
  infra: Infrastructure;
  clock: TestClock;
  databaseUrl: string;
  /** Every log line the app wrote, for the "no secret in any log" checks. */
  logs: string[];
  close(): Promise<void>;
}

/**
 * The real app on a fresh database, with a hand-moved clock and a captured logger.
 * With `redisUrl`, queues and invalidations run on Redis; without, on PostgreSQL.
 */
export async function startTestApp(
  options: {
    redisUrl?: string;
    env?: Record<string, string>;
    /** How the app runs (`requestLog`), as `main.ts` would pass it. */
    app?: AppOptions;
    databaseUrl?: string;
    /** A known queue namespace, so a worker in another process can serve this app's jobs. */
    queueNamespace?: string;
  } = {},
): Promise<TestApp> {
  const db = options.databaseUrl ? null : await createTestDatabase();
  const databaseUrl = options.databaseUrl ?? db!.url;
  const namespace = options.queueNamespace ?? `q${Math.random().toString(36).slice(2, 10)}`;
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    // Redis outlives a test run: every app writes its rate-limit windows under its own prefix.
    REDIS_PREFIX: namespace,
    KEY_PEPPER: TEST_PEPPER,
    REDIS_URL: options.redisUrl ?? '',
    LOG_LEVEL: 'info',
    PORT: '0',
    ...options.env,
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const logger = createLogger('info', sink);
  const clock = createTestClock();
  const assembled = await assembleApp(config, logger, { queueNamespace: namespace, clock }, options.app);
  return {
    app: assembled.app,
    deps: assembled.services,
    infra: assembled.infra,
    clock,
    databaseUrl,
    logs,
    async close() {
      await assembled.close();
      await db?.drop();
    },
  };
}

/** Signs up through the console API and reveals the first key: what a new user does. */
export async function signUp(
  app: FastifyInstance,
  input: { email?: string; plan?: 'free' | 'trial'; workspaceName?: string } = {},
): Promise<{
  cookie: string;
  csrf: string;
  key: string;
  keyId: string;
  workspaceId: string;
  email: string;
  password: string;
}> {
  const email = input.email ?? `user-${Math.random().toString(36).slice(2)}@example.com`;
  const password = 'correct horse battery staple';
  const res = await app.inject({
    method: 'POST',
    url: '/api/console/signup',
    payload: {
      email,
      password,
      workspaceName: input.workspaceName ?? 'Acme Security',
      plan: input.plan ?? 'trial',
    },
  });
  if (res.statusCode !== 201) throw new Error(`signup failed: ${res.statusCode} ${res.body}`);
  const body = res.json() as { workspace: { id: string }; revealUrl: string; csrfToken: string };
  const cookie = String(res.headers['set-cookie']).split(';')[0]!;
  const reveal = await app.inject({
    method: 'GET',
    url: `/api/console${body.revealUrl}`,
    headers: { cookie },
  });
  if (reveal.statusCode !== 200) throw new Error(`reveal failed: ${reveal.statusCode} ${reveal.body}`);
  const revealed = reveal.json() as { key: string; keyId: string };
  return {
    cookie,
    csrf: body.csrfToken,
    key: revealed.key,
    keyId: revealed.keyId,
    workspaceId: body.workspace.id,
    email,
    password,
  };
}

/** Creates a key with the given scopes through the console and returns its secret. */
export async function createKey(
  app: FastifyInstance,
  session: { cookie: string; csrf: string },
  scopes: string[],
  label = 'test key',
): Promise<{ id: string; key: string }> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/console/keys',
    headers: { cookie: session.cookie, 'x-csrf-token': session.csrf },
    payload: { label, scopes },
  });
  if (res.statusCode !== 201) throw new Error(`create key failed: ${res.statusCode} ${res.body}`);
  const created = res.json() as { id: string; revealUrl: string };
  const reveal = await app.inject({
    method: 'GET',
    url: `/api/console${created.revealUrl}`,
    headers: { cookie: session.cookie },
  });
  return { id: created.id, key: (reveal.json() as { key: string }).key };
}

/**
 * Signs up and swaps the first key for one that also holds `workflows:write`, which a first key
 * never has (docs/api.md#keys): the way a workspace owner sets up a key to manage workflows.
 */
export async function signUpWorkflowManager(
  app: FastifyInstance,
  input: Parameters<typeof signUp>[1] = {},
): Promise<Awaited<ReturnType<typeof signUp>>> {
  const session = await signUp(app, input);
  const manager = await createKey(app, session, [...FIRST_KEY_SCOPES, 'workflows:write'], 'workflow manager');
  return { ...session, key: manager.key, keyId: manager.id };
}
