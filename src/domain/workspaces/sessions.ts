import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/pool.js';
import type { Role } from '../../db/entities/index.js';
import { hashToken, randomToken } from '../keys/key-secrets.js';
import { deleteSession, findLiveSession, insertSession, type SignInMethod } from './workspace-store.js';

export type { SignInMethod };

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
  /** The member's role in the workspace as it is now, read with the session on every request. */
  role: Role;
  csrfToken: string;
  expiresAt: Date;
  /**
   * What made the session (docs/console.md#sso-and-sessions): `sso` only when its own
   * workspace's single sign-on did; a session another workspace's SSO made never moves here.
   */
  signIn: SignInMethod;
}

/** How a new session was made, and how long it lasts. */
export interface NewSessionOptions {
  /** @defaultValue 'password' */
  signIn?: SignInMethod;
  /**
   * When it ends; by default {@link SESSION_TTL_MS} from now. A switch keeps the end of the
   * session it replaces, so switching never lengthens a sign-in.
   */
  expiresAt?: Date;
}

export function createSessionStore(db: Db, pepper: string, clock: () => Date = () => new Date()) {
  return {
    /** A session for a member of `workspaceId` in the role they hold there. */
    async create(
      userId: string,
      workspaceId: string,
      role: Role,
      options: NewSessionOptions = {},
    ): Promise<{ token: string; session: Session }> {
      const token = randomToken();
      const session: Session = {
        id: randomUUID(),
        userId,
        workspaceId,
        role,
        csrfToken: randomToken(24),
        expiresAt: options.expiresAt ?? new Date(clock().getTime() + SESSION_TTL_MS),
        signIn: options.signIn ?? 'password',
      };
      await insertSession(db, {
        id: session.id,
        userId,
        workspaceId,
        csrfToken: session.csrfToken,
        expiresAt: session.expiresAt,
        signIn: session.signIn,
        tokenHash: hashToken(pepper, token),
      });
      return { token, session };
    },

    async find(token: string): Promise<Session | null> {
      if (token.length < 20 || token.length > 100) return null;
      return findLiveSession(db, hashToken(pepper, token), clock());
    },

    async destroy(token: string): Promise<void> {
      await deleteSession(db, hashToken(pepper, token));
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
