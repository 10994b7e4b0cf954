import { randomUUID } from 'node:crypto';
import type { Logger } from '../../lib/logger.js';
import { withTransaction, type Db } from '../../db/pool.js';
import { AppError } from '../../lib/errors.js';
import type { Mailer } from '../../lib/mailer.js';
import { passwordResetMessage } from '../mail/messages.js';
import type { Actor } from '../keys/key-service.js';
import { hashToken, randomToken } from '../keys/key-secrets.js';
import { auditMembers } from './audit.js';
import * as members from './member-store.js';
import { hashPassword } from './password.js';
import { findResetForUpdate, insertPasswordReset, useUpResets } from './password-reset-store.js';
import { deleteUserSessions } from './workspace-store.js';

/** How long a reset link works (docs/console.md#password-reset). */
export const RESET_TTL_MS = 30 * 60_000;

export interface PasswordResetDeps {
  db: Db;
  pepper: string;
  clock: () => Date;
  publicBaseUrl: string;
  mailer: Mailer | null;
  logger: Pick<Logger, 'warn'>;
}

const EXPIRED = 'This reset link was already used or is older than 30 minutes: ask for a new one.';

/**
 * Password reset (docs/console.md#password-reset): a random token stored as its HMAC, valid 30
 * minutes and used once; setting the password uses up every other link of the account and ends
 * every session of the person, in every workspace. Asking answers the same whether or not the
 * address has an account: the route answers before any of it happens.
 */
export function createPasswordResetService(deps: PasswordResetDeps) {
  const { db, clock } = deps;

  /** A reset link for the account of `email` (audited in each of its workspaces), or null. */
  async function issue(email: string, actor: Actor): Promise<{ to: string; url: string } | null> {
    return withTransaction(db, async (tx) => {
      const user = await members.findUserByEmail(tx, email);
      if (!user) return null;
      const token = randomToken();
      const now = clock();
      await insertPasswordReset(tx, {
        id: randomUUID(),
        userId: user.id,
        tokenHash: hashToken(deps.pepper, token),
        createdAt: now,
        expiresAt: new Date(now.getTime() + RESET_TTL_MS),
      });
      for (const ws of await members.workspacesOf(tx, user.id)) {
        await auditMembers(tx, ws.id, 'password_reset_request', actor, { userId: user.id }, now);
      }
      return { to: user.email, url: `${deps.publicBaseUrl}/reset-password/${token}` };
    });
  }

  return {
    /** The operator's way (`admin reset-password`): the link itself, or null for no such account. */
    issueLink: async (email: string) =>
      (await issue(email, { actor: 'operator', ip: null, userAgent: 'admin-cli' }))?.url ?? null,

    /**
     * Emails a link when the address has an account and SMTP is set; otherwise does nothing.
     * Never throws: the caller has already answered.
     */
    async request(email: string, actor: Omit<Actor, 'actor'>): Promise<void> {
      try {
        const link = await issue(email, { actor: 'anonymous', ...actor });
        if (!link || !deps.mailer) return;
        await deps.mailer.send(
          passwordResetMessage({ to: link.to, url: link.url, validMinutes: RESET_TTL_MS / 60_000 }),
        );
      } catch (err) {
        deps.logger.warn({ err: String(err) }, 'password reset email not sent');
      }
    },

    /** Sets the new password; 410 `reset_expired` for an unknown, used or expired link. */
    async complete(token: string, password: string, actor: Omit<Actor, 'actor'>): Promise<void> {
      const hash = await hashPassword(password);
      await withTransaction(db, async (tx) => {
        const reset = await findResetForUpdate(tx, hashToken(deps.pepper, token));
        const now = clock();
        if (!reset || reset.usedAt || reset.expiresAt.getTime() <= now.getTime()) {
          throw new AppError('reset_expired', EXPIRED);
        }
        await members.setPasswordHash(tx, reset.userId, hash);
        await useUpResets(tx, reset.userId, now);
        const ended = await deleteUserSessions(tx, reset.userId);
        for (const ws of await members.workspacesOf(tx, reset.userId)) {
          await auditMembers(
            tx,
            ws.id,
            'password_reset',
            { actor: `user:${reset.userId}`, ...actor },
            { userId: reset.userId, sessionsEnded: ended },
            now,
          );
        }
      });
    },
  };
}

export type PasswordResetService = ReturnType<typeof createPasswordResetService>;
