import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testRedisUrl } from '../../helpers/db.js';
import { signUpOverHttp, startServerProcess, type ServerProcess } from '../../helpers/server-process.js';
import { TEST_PEPPER } from '../../helpers/test-app.js';

const redisUrl = testRedisUrl();
const started: ServerProcess[] = [];
const drops: (() => Promise<void>)[] = [];

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  for (const d of drops) await d();
});

async function json(res: Response) {
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function twoServers(env: Record<string, string>) {
  const db = await createTestDatabase();
  drops.push(db.drop);
  // One deployment: both processes share the database and the Redis prefix.
  const common = {
    DATABASE_URL: db.url,
    KEY_PEPPER: TEST_PEPPER,
    KEY_CACHE_TTL_MS: '60000',
    REDIS_PREFIX: `rev${Date.now().toString(36)}`,
    ...env,
  };
  const a = await startServerProcess('web', common);
  started.push(a);
  const b = await startServerProcess('web', common);
  started.push(b);
  return { a, b };
}

async function revokesWithinOneSecond(a: ServerProcess, b: ServerProcess) {
  const { cookie, csrf, key, keyId } = await signUpOverHttp(a.url, 'free');

  // B verifies the key once, so it sits in B's cache (TTL 60 s: only the invalidation can end it).
  const me = () => fetch(`${b.url}/api/v1/keys/me`, { headers: { 'x-api-key': key } });
  expect((await me()).status).toBe(200);
  expect((await me()).status).toBe(200);

  const revoke = await fetch(`${a.url}/api/console/keys/${keyId}/revoke`, {
    method: 'POST',
    headers: { cookie, 'x-csrf-token': csrf },
  });
  expect(revoke.status).toBe(200);
  const revokedAt = Date.now();
  let last = await json(await me());
  while (last.status === 200 && Date.now() - revokedAt < 3000) {
    await new Promise((r) => setTimeout(r, 20));
    last = await json(await me());
  }
  const elapsed = Date.now() - revokedAt;
  expect(last.status).toBe(401);
  expect(last.body.code).toBe('key_revoked');
  expect(elapsed).toBeLessThan(1000);
}

describe('revocation across processes', () => {
  it('another process rejects a revoked key within one second (PostgreSQL LISTEN/NOTIFY)', async () => {
    const { a, b } = await twoServers({ REDIS_URL: '' });
    await revokesWithinOneSecond(a, b);
  }, 60_000);

  it.skipIf(!redisUrl)(
    'another process rejects a revoked key within one second (Redis pub/sub)',
    async () => {
      const { a, b } = await twoServers({ REDIS_URL: redisUrl });
      await revokesWithinOneSecond(a, b);
    },
    60_000,
  );
});
