import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../db/pool.js';
import { hashToken, randomToken } from '../keys/key-secrets.js';

/**
 * Console sessions: an opaque token in an HTTP-only, SameSite=Strict cookie; only its
 * HMAC is stored. Each session carries its own CSRF token, sent back by the pages in the
 * `X-CSRF-Token` header on every state-changing call.
 */
export const SESSION_TTL_MS = 12 * 3_600_000;

export interface Session {
  id: string;
  userId: string;
  workspaceId: string;
  csrfToken: string;
  expiresAt: Date;
}

export function createSessionStore(db: Queryable, pepper: string, clock: () => Date = () => new Date()) {
  return {
    async create(userId: string, workspaceId: string): Promise<{ token: string; session: Session }> {
      const token = randomToken();
      const session: Session = {
        id: randomUUID(),
        userId,
        workspaceId,
        csrfToken: randomToken(24),
        expiresAt: new Date(clock().getTime() + SESSION_TTL_MS),
      };
      await db.query(
        `INSERT INTO console_sessions (id, token_hash, csrf_token, user_id, workspace_id, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
        [session.id, hashToken(pepper, token), session.csrfToken, userId, workspaceId, session.expiresAt],
      );
      return { token, session };
    },

    async find(token: string): Promise<Session | null> {
      if (token.length < 20 || token.length > 100) return null;
      const res = await db.query<{
        id: string;
        user_id: string;
        workspace_id: string;
        csrf_token: string;
        expires_at: Date;
      }>(
        `SELECT id, user_id, workspace_id, csrf_token, expires_at FROM console_sessions WHERE token_hash = $1 AND expires_at > $2`,
        [hashToken(pepper, token), clock()],
      );
      const r = res.rows[0];
      return r
        ? {
            id: r.id,
            userId: r.user_id,
            workspaceId: r.workspace_id,
            csrfToken: r.csrf_token,
            expiresAt: r.expires_at,
          }
        : null;
    },

    async destroy(token: string): Promise<void> {
      await db.query(`DELETE FROM console_sessions WHERE token_hash = $1`, [hashToken(pepper, token)]);
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
