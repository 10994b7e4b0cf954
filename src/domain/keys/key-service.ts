import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { Em } from '../../db/orm.js';
import {
  ApiKeySchema,
  KeyAuditEventSchema,
  WorkspaceSchema,
  type ApiKey,
  type KeyAuditEvent,
} from '../../db/entities/index.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { generateApiKey, maskApiKey, maskParts } from './key-format.js';
import { hashApiKey, hashToken, randomToken, sealSecret, unsealSecret } from './key-secrets.js';
import { DEFAULT_GRACE_HOURS, effectiveKeyState, graceEnd } from './key-lifecycle.js';
import type { InvalidationBus } from './invalidation-bus.js';

/** Who did something to a key, for the audit trail (DECISIONS §4: who, when, from where). */
export interface Actor {
  /** `user:<id>`, `key:<id>` or `operator`. */
  actor: string;
  ip: string | null;
  userAgent: string | null;
}

export const REVEAL_TTL_MS = 15 * 60_000;

export interface KeyServiceDeps {
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

export function audit(
  em: Em,
  event: Omit<KeyAuditEvent, 'at' | 'details'> & { details?: Record<string, unknown> },
): void {
  em.create(KeyAuditEventSchema, { ...event, details: event.details ?? {}, at: new Date() });
}

/**
 * Key management (DECISIONS §4). Every function takes the caller's forked entity manager
 * and the workspace it acts for; a key of another workspace is "not found", never "forbidden".
 */
export function createKeyService(deps: KeyServiceDeps) {
  const { pepper, clock } = deps;

  async function findKey(em: Em, workspaceId: string, keyId: string, lock = false): Promise<ApiKey> {
    if (!isUuid(keyId)) throw notFound('key');
    const key = await em.findOne(
      ApiKeySchema,
      { id: keyId, workspaceId },
      lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
    );
    if (!key) throw notFound('key');
    return key;
  }

  /**
   * Adds a key (and its audit event) in the caller's transaction. With `reveal`, the secret is
   * sealed into a one-time reveal row; without, the answer itself reveals it (audited as such).
   */
  async function insertKey(
    em: Em,
    input: {
      workspaceId: string;
      label: string;
      scopes: string[];
      expiresAt: Date | null;
      actor: Actor;
      reveal: boolean;
    },
  ): Promise<NewKey> {
    const secret = generateApiKey();
    const now = clock();
    const key = em.create(ApiKeySchema, {
      id: randomUUID(),
      workspaceId: input.workspaceId,
      label: input.label,
      keyHash: hashApiKey(pepper, secret),
      ...maskParts(secret),
      scopes: [...new Set(input.scopes)],
      state: 'active',
      expiresAt: input.expiresAt,
      graceEndsAt: null,
      successorId: null,
      createdAt: now,
      lastUsedAt: null,
      revokedAt: null,
    });
    audit(em, { workspaceId: input.workspaceId, keyId: key.id, action: 'create', ...input.actor });
    if (!input.reveal) {
      audit(em, {
        workspaceId: input.workspaceId,
        keyId: key.id,
        action: 'reveal',
        ...input.actor,
        details: { via: 'api_response' },
      });
      return { key, secret, revealToken: null };
    }
    const revealToken = randomToken();
    await em.flush();
    await em
      .getConnection()
      .execute(
        `INSERT INTO key_reveals (token_hash, key_id, workspace_id, sealed_secret, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
        [
          hashToken(pepper, revealToken),
          key.id,
          key.workspaceId,
          sealSecret(pepper, secret),
          now,
          new Date(now.getTime() + REVEAL_TTL_MS),
        ],
        'run',
        em.getTransactionContext(),
      );
    return { key, secret, revealToken };
  }

  return {
    findKey,

    /** Creates a key; with `reveal`, it is shown once on the reveal page instead of in the answer. */
    async createKey(
      em: Em,
      input: {
        workspaceId: string;
        label: string;
        scopes: string[];
        expiresAt: Date | null;
        actor: Actor;
        reveal: boolean;
      },
    ): Promise<NewKey> {
      return em.transactional((tx) => insertKey(tx, input));
    },

    /**
     * Rotation: a successor with the same label, scopes and expiry length; the old key is
     * `rotating` and keeps working until its grace period ends (0 to 7 days, default 24 h).
     */
    async rotateKey(
      em: Em,
      input: { workspaceId: string; keyId: string; graceHours?: number; actor: Actor; reveal: boolean },
    ): Promise<{ old: ApiKey; successor: NewKey }> {
      const result = await em.transactional(async (tx) => {
        const old = await findKey(tx, input.workspaceId, input.keyId, true);
        const now = clock();
        const state = effectiveKeyState(old, now);
        if (state !== 'active') {
          throw new AppError('conflict', `Only an active key can be rotated; this key is ${state}.`);
        }
        const lifetime = old.expiresAt ? old.expiresAt.getTime() - old.createdAt.getTime() : null;
        const successor = await insertKey(tx, {
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
        audit(tx, {
          workspaceId: input.workspaceId,
          keyId: old.id,
          action: 'rotate',
          ...input.actor,
          details: { successorId: successor.key.id, graceHours: hours },
        });
        return { old, successor };
      });
      await deps.bus?.publish({ kind: 'key', id: input.keyId });
      return result;
    },

    /** Revocation is immediate and final; it reaches every process through the bus. */
    async revokeKey(em: Em, input: { workspaceId: string; keyId: string; actor: Actor }): Promise<ApiKey> {
      const key = await em.transactional(async (tx) => {
        const k = await findKey(tx, input.workspaceId, input.keyId, true);
        if (k.state !== 'revoked') {
          k.state = 'revoked';
          k.revokedAt = clock();
          audit(tx, { workspaceId: input.workspaceId, keyId: k.id, action: 'revoke', ...input.actor });
        }
        return k;
      });
      await deps.bus?.publish({ kind: 'key', id: input.keyId });
      return key;
    },

    async listKeys(em: Em, workspaceId: string): Promise<ApiKey[]> {
      return em.find(ApiKeySchema, { workspaceId }, { orderBy: { createdAt: 'desc', id: 'asc' } });
    },

    /**
     * The one-time reveal: the sealed secret is wiped in the same statement that reads
     * it, so two concurrent views cannot both see it. Unknown token: not found; used or
     * older than 15 minutes: `reveal_expired`.
     */
    async reveal(
      em: Em,
      input: { token: string; workspaceId: string; actor: Actor },
    ): Promise<{ keyId: string; key: string; masked: string }> {
      const tokenHash = hashToken(pepper, input.token);
      const outcome = await em.transactional(async (tx) => {
        const conn = tx.getConnection();
        const ctx = tx.getTransactionContext();
        const rows = await conn.execute<
          {
            key_id: string;
            sealed_secret: string | null;
            expires_at: string | Date;
            revealed_at: string | Date | null;
          }[]
        >(
          `SELECT key_id, sealed_secret, expires_at, revealed_at FROM key_reveals
            WHERE token_hash = ? AND workspace_id = ? FOR UPDATE`,
          [tokenHash, input.workspaceId],
          'all',
          ctx,
        );
        const row = rows[0];
        if (!row) return null;
        const now = clock();
        const usable =
          row.sealed_secret !== null &&
          !row.revealed_at &&
          new Date(row.expires_at).getTime() > now.getTime();
        // Whatever happens, the sealed copy is gone after this statement.
        await conn.execute(
          `UPDATE key_reveals SET sealed_secret = NULL, revealed_at = COALESCE(revealed_at, ?) WHERE token_hash = ?`,
          [usable ? now : null, tokenHash],
          'run',
          ctx,
        );
        if (!usable || !row.sealed_secret) return 'expired' as const;
        const secret = unsealSecret(pepper, row.sealed_secret);
        audit(tx, {
          workspaceId: input.workspaceId,
          keyId: row.key_id,
          action: 'reveal',
          ...input.actor,
          details: { via: 'reveal_page' },
        });
        return { keyId: row.key_id, key: secret, masked: maskApiKey(secret.slice(0, 8), secret.slice(-4)) };
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

    async workspaceOf(em: Em, workspaceId: string) {
      const ws = await em.findOne(WorkspaceSchema, { id: workspaceId });
      if (!ws) throw notFound('workspace');
      return ws;
    },
  };
}

export type KeyService = ReturnType<typeof createKeyService>;
