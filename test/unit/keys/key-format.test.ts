import { describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  checksumOf,
  generateApiKey,
  isWellFormedApiKey,
  KEY_LENGTH,
  maskApiKey,
  maskParts,
} from '../../../src/domain/keys/key-format.js';
import { createKeyVerifier } from '../../../src/domain/keys/key-verifier.js';
import type { Queryable } from '../../../src/db/pool.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function countingDb(): Queryable & { queries: number } {
  const db = {
    queries: 0,
    query: async () => {
      db.queries++;
      return { rows: [], rowCount: 0 };
    },
  };
  return db as unknown as Queryable & { queries: number };
}

describe('API key format', () => {
  it('generates svc_ + 32 base62 + 6 base62 checksum characters', () => {
    for (let i = 0; i < 200; i++) {
      const key = generateApiKey();
      expect(key).toMatch(/^svc_[0-9A-Za-z]{38}$/);
      expect(key).toHaveLength(KEY_LENGTH);
      expect(key.slice(36)).toBe(checksumOf(key.slice(4, 36)));
      expect(isWellFormedApiKey(key)).toBe(true);
    }
  });

  it('never repeats a key', () => {
    const keys = new Set(Array.from({ length: 2000 }, generateApiKey));
    expect(keys.size).toBe(2000);
  });

  it('rejects every one-character change of a valid key', () => {
    const key = generateApiKey();
    let rejected = 0;
    for (let pos = 4; pos < key.length; pos++) {
      const other = BASE62[(BASE62.indexOf(key[pos]!) + 17) % 62]!;
      const changed = key.slice(0, pos) + other + key.slice(pos + 1);
      if (!isWellFormedApiKey(changed)) rejected++;
    }
    expect(rejected).toBe(key.length - 4);
  });

  it.each([
    ['empty', ''],
    ['wrong prefix', `sk_${generateApiKey().slice(3)}`],
    ['too short', generateApiKey().slice(0, -1)],
    ['too long', `${generateApiKey()}a`],
    ['non-base62', `${generateApiKey().slice(0, 20)}-${generateApiKey().slice(21)}`],
    ['whitespace', ` ${generateApiKey()}`],
  ])('rejects a malformed key (%s)', (_name, candidate) => {
    expect(isWellFormedApiKey(candidate)).toBe(false);
  });

  it('masks as the first 8 characters, 16 asterisks and the last 4', () => {
    const key = 'svc_AbCdEFGHIJKLMNOPQRSTUVWXYZ012345wXyZ00';
    const { prefix, lastFour } = maskParts(key);
    expect(maskApiKey(prefix, lastFour)).toBe('svc_AbCd****************yZ00');
    expect(maskApiKey('svc_AbCd', 'wXyZ')).toBe('svc_AbCd****************wXyZ');
  });

  it('rejects a key with a bad checksum before any lookup: no query is made', async () => {
    const db = countingDb();
    const verifier = createKeyVerifier({ db, pepper: 'p'.repeat(40), ttlMs: 30_000 });
    const key = generateApiKey();
    const broken = key.slice(0, 10) + (key[10] === 'a' ? 'b' : 'a') + key.slice(11);
    expect(await verifier.verify(broken)).toEqual({ ok: false, code: 'invalid_api_key' });
    expect(await verifier.verify('svc_garbage')).toEqual({ ok: false, code: 'invalid_api_key' });
    expect(db.queries).toBe(0);
    // A well-formed but unknown key is looked up (once), and is not cached as good.
    expect(await verifier.verify(key)).toEqual({ ok: false, code: 'invalid_api_key' });
    expect(db.queries).toBe(1);
  });
});

/** A key row as the verifier's lookup reads it. */
const keyRow = (state: 'active' | 'revoked') => ({
  id: 'k1',
  label: 'k',
  scopes: ['usage:read'],
  state,
  prefix: 'svc_AbCd',
  last_four: 'wXyZ',
  created_at: new Date(),
  expires_at: null,
  grace_ends_at: null,
  last_used_at: null,
  successor_id: null,
  ws_id: 'w1',
  ws_name: 'W',
  ws_plan: 'free',
  ws_trial_ends_at: null,
  ws_status: 'active',
  ws_rotation_policy_days: 90,
});

describe('key verifier cache', () => {
  it('does not cache a lookup that was in flight when an invalidation arrived', async () => {
    const pepper = 'p'.repeat(40);
    const key = generateApiKey();
    let state: 'active' | 'revoked' = 'active';
    let release: (() => void) | null = null;
    let queries = 0;
    const row = () => keyRow(state);
    const db = {
      query: async () => {
        queries++;
        const snapshot = row(); // read before the revoke commits
        if (queries === 1) await new Promise<void>((r) => (release = r));
        return { rows: [snapshot], rowCount: 1 };
      },
    } as unknown as Queryable;
    const verifier = createKeyVerifier({ db, pepper, ttlMs: 60_000 });

    const slow = verifier.verify(key);
    await new Promise((r) => setTimeout(r, 5));
    state = 'revoked';
    verifier.invalidate({ kind: 'key', id: 'k1' });
    release!();
    expect(await slow).toMatchObject({ ok: true }); // it began before the revoke
    expect(await verifier.verify(key)).toEqual({ ok: false, code: 'key_revoked' });
    expect(queries).toBe(2);
  });

  it('reads the key-version counter ahead in the last quarter of its window: no request waits on it', async () => {
    const key = generateApiKey();
    const db = { query: async () => ({ rows: [keyRow('active')], rowCount: 1 }) } as unknown as Queryable;
    let now = Date.now();
    vi.spyOn(Date, 'now').mockImplementation(() => now);
    onTestFinished(() => {
      vi.restoreAllMocks();
    });
    let reads = 0;
    let release: (() => void) | null = null;
    const verifier = createKeyVerifier({
      db,
      pepper: 'p'.repeat(40),
      ttlMs: 60_000,
      versionCheckMs: 200,
      readVersion: async () => {
        reads++;
        if (reads === 2) await new Promise<void>((r) => (release = r)); // the read ahead hangs
        return 'v1';
      },
    });
    expect(await verifier.verify(key)).toMatchObject({ ok: true }); // first read, then the lookup
    expect(reads).toBe(1);
    now += 170; // past 75% of the window, inside it
    // Answered from the cache while the read it started is still out.
    expect(await verifier.verify(key)).toMatchObject({ ok: true });
    expect(reads).toBe(2);
    expect(await verifier.verify(key)).toMatchObject({ ok: true }); // one read at a time
    expect(reads).toBe(2);
    release!();
    await new Promise((r) => setTimeout(r, 0));
    // The read ahead renewed the window from when it started: still trusted without a read.
    now += 60;
    expect(await verifier.verify(key)).toMatchObject({ ok: true });
    expect(reads).toBe(2);
  });
});
