import { randomUUID } from 'node:crypto';
import { withTransaction, type Db } from '../../db/pool.js';
import type { ApiKey, AuditAction } from '../../db/entities/index.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { generateApiKey, maskApiKey, maskParts } from './key-format.js';
import { hashApiKey, hashToken, randomToken, sealSecret, unsealSecret } from './key-secrets.js';
import { DEFAULT_GRACE_HOURS, effectiveKeyState, graceEnd } from './key-lifecycle.js';
import type { InvalidationBus } from './invalidation-bus.js';
import * as store from './keys-store.js';

/** Who did something to a key, for the audit trail (who, when, from where). */
export interface Actor {
  /** `user:<id>`, `key:<id>` or `operator`. */
  actor: string;
  ip: string | null;
  userAgent: string | null;
}

export const REVEAL_TTL_MS = 15 * 60_000;

export interface KeyServiceDeps {
  /** The pool: each use case runs its statements in a transaction of its own. */
  db: Db;
  pepper: string;
  bus: InvalidationBus | null;
  clock: () => Date;
}

export interface NewKey {
  key: ApiKey;
  /** The full secret: returned once, to be shown once, never stored. */
  secret: string;
  /** Set when the key is to be shown on the one-time reveal page rather than in the answer. */
  revealToken: string | null;
}

/** What a new key needs; see {@link insertKey}. */
export interface KeyInput {
  workspaceId: string;
  label: string;
  scopes: string[];
  expiresAt: Date | null;
  actor: Actor;
  reveal: boolean;
}

/**
 * Stores a key (and its audit event) on `db`, a client of the caller's transaction. With `reveal`, the secret
 * is sealed into a one-time reveal row; without, the answer itself reveals it (audited as such).
 * Exported for the workspace use cases, which create a first key in their own transaction.
 */
export async function insertKey(
  db: Db,
  ctx: { pepper: string; clock: () => Date },
  input: KeyInput,
): Promise<NewKey> {
  const secret = generateApiKey();
  const now = ctx.clock();
  const key: ApiKey = {
    id: randomUUID(),
    workspaceId: input.workspaceId,
    label: input.label,
    keyHash: hashApiKey(ctx.pepper, secret),
    ...maskParts(secret),
    scopes: [...new Set(input.scopes)],
    state: 'active',
    expiresAt: input.expiresAt,
    graceEndsAt: null,
    successorId: null,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
  };
  await store.insertKeyRow(db, key);
  await audit(db, { workspaceId: input.workspaceId, keyId: key.id }, 'create', input.actor);
  if (!input.reveal) {
    await audit(db, { workspaceId: input.workspaceId, keyId: key.id }, 'reveal', input.actor, {
      via: 'api_response',
    });
    return { key, secret, revealToken: null };
  }
  const revealToken = randomToken();
  await store.insertReveal(db, {
    tokenHash: hashToken(ctx.pepper, revealToken),
    keyId: key.id,
    workspaceId: key.workspaceId,
    sealedSecret: sealSecret(ctx.pepper, secret),
    createdAt: now,
    expiresAt: new Date(now.getTime() + REVEAL_TTL_MS),
  });
  return { key, secret, revealToken };
}

/**
 * One audit event: what `actor` did to a key, written on `db` (the caller's transaction) and
 * stamped with the time of the write.
 */
function audit(
  db: Db,
  key: { workspaceId: string; keyId: string },
  action: AuditAction,
  actor: Actor,
  details?: Record<string, unknown>,
): Promise<void> {
  return store.insertAuditEvent(db, { ...key, action, ...actor, details, at: new Date() });
}

/**
 * Key management. Every function acts for one workspace; a key of another workspace is "not
 * found", never "forbidden". Each change runs in a transaction of its own.
 */
export function createKeyService(deps: KeyServiceDeps) {
  const { pepper, clock } = deps;

  async function findKey(db: Db, workspaceId: string, keyId: string, lock = false): Promise<ApiKey> {
    if (!isUuid(keyId)) throw notFound('key');
    const key = await store.findKey(db, workspaceId, keyId, lock);
    if (!key) throw notFound('key');
    return key;
  }

  return {
    /** Creates a key; with `reveal`, it is shown once on the reveal page instead of in the answer. */
    async createKey(input: KeyInput): Promise<NewKey> {
      return withTransaction(deps.db, (tx) => insertKey(tx, deps, input));
    },

    /**
     * Rotation: a successor with the same label, scopes and expiry length; the old key is
     * `rotating` and keeps working until its grace period ends (0 to 7 days, default 24 h).
     */
    async rotateKey(input: {
      workspaceId: string;
      keyId: string;
      graceHours?: number;
      actor: Actor;
      reveal: boolean;
    }): Promise<{ old: ApiKey; successor: NewKey }> {
      const result = await withTransaction(deps.db, async (tx) => {
        const old = await findKey(tx, input.workspaceId, input.keyId, true);
        const now = clock();
        const state = effectiveKeyState(old, now);
        if (state !== 'active') {
          throw new AppError('conflict', `Only an active key can be rotated; this key is ${state}.`);
        }
        const lifetime = old.expiresAt ? old.expiresAt.getTime() - old.createdAt.getTime() : null;
        const successor = await insertKey(tx, deps, {
          workspaceId: input.workspaceId,
          label: old.label,
          scopes: old.scopes,
          expiresAt: lifetime === null ? null : new Date(now.getTime() + lifetime),
          actor: input.actor,
          reveal: input.reveal,
        });
        const hours = input.graceHours ?? DEFAULT_GRACE_HOURS;
        old.state = hours === 0 ? 'expired' : 'rotating';
        old.graceEndsAt = graceEnd(now, hours);
        old.successorId = successor.key.id;
        await store.updateKeyLifecycle(tx, old);
        await audit(tx, { workspaceId: input.workspaceId, keyId: old.id }, 'rotate', input.actor, {
          successorId: successor.key.id,
          graceHours: hours,
        });
        // With no grace the old key ends now, so the sweeper never sees it: its expiry is
        // audited here, as every expiry is.
        if (old.state === 'expired') {
          await audit(tx, { workspaceId: input.workspaceId, keyId: old.id }, 'expire', input.actor, {
            reason: 'rotation',
            successorId: successor.key.id,
          });
        }
        return { old, successor };
      });
      await deps.bus?.publish({ kind: 'key', id: input.keyId });
      return result;
    },

    /** Revocation is immediate and final; it reaches every process through the bus. */
    async revokeKey(input: { workspaceId: string; keyId: string; actor: Actor }): Promise<ApiKey> {
      const key = await withTransaction(deps.db, async (tx) => {
        const k = await findKey(tx, input.workspaceId, input.keyId, true);
        if (k.state !== 'revoked') {
          k.state = 'revoked';
          k.revokedAt = clock();
          await store.updateKeyLifecycle(tx, k);
          await audit(tx, { workspaceId: input.workspaceId, keyId: k.id }, 'revoke', input.actor);
        }
        return k;
      });
      await deps.bus?.publish({ kind: 'key', id: input.keyId });
      return key;
    },

    async listKeys(workspaceId: string): Promise<ApiKey[]> {
      return store.listKeys(deps.db, workspaceId);
    },

    /**
     * The one-time reveal: the sealed secret is wiped in the same transaction that reads it,
     * under its row lock, so two concurrent views cannot both see it. Unknown token: not found;
     * used or older than 15 minutes: `reveal_expired`.
     */
    async reveal(input: {
      token: string;
      workspaceId: string;
      actor: Actor;
    }): Promise<{ keyId: string; key: string; masked: string }> {
      const tokenHash = hashToken(pepper, input.token);
      const outcome = await withTransaction(deps.db, async (tx) => {
        const now = clock();
        const isUsable = (r: store.HeldReveal) =>
          r.sealedSecret !== null && !r.revealedAt && r.expiresAt.getTime() > now.getTime();
        const row = await store.takeReveal(tx, tokenHash, input.workspaceId, (r) =>
          isUsable(r) ? now : null,
        );
        if (!row) return null;
        if (!isUsable(row) || !row.sealedSecret) return 'expired' as const;
        const secret = unsealSecret(pepper, row.sealedSecret);
        await audit(tx, { workspaceId: input.workspaceId, keyId: row.keyId }, 'reveal', input.actor, {
          via: 'reveal_page',
        });
        return { keyId: row.keyId, key: secret, masked: maskApiKey(secret.slice(0, 8), secret.slice(-4)) };
      });
      if (outcome === null) throw notFound('reveal link');
      if (outcome === 'expired') {
        throw new AppError(
          'reveal_expired',
          'This key was already revealed, or its reveal link is older than 15 minutes.',
        );
      }
      return outcome;
    },
  };
}

export type KeyService = ReturnType<typeof createKeyService>;
