import { randomUUID } from 'node:crypto';
import { withTransaction, type Db } from '../../db/pool.js';
import type { Invitation } from '../../db/entities/index.js';
import { AppError, notFound } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import type { Mailer } from '../../lib/mailer.js';
import { invitationMessage } from '../mail/messages.js';
import type { Actor } from '../keys/key-service.js';
import { hashToken, randomToken } from '../keys/key-secrets.js';
import { auditMembers } from './audit.js';
import type { Caller } from './members.js';
import * as members from './member-store.js';
import * as store from './invitation-store.js';
import { hashPassword, verifyPassword } from './password.js';
import { findWorkspace, insertMembership, insertUser } from './workspace-store.js';
import type { Role } from './roles.js';

/** How long an invitation link works (docs/console.md#invitations). */
export const INVITATION_TTL_MS = 7 * 86_400_000;

export interface InvitationServiceDeps {
  db: Db;
  pepper: string;
  clock: () => Date;
  /** The console's address, for the links (PUBLIC_BASE_URL). */
  publicBaseUrl: string;
  /** Null without SMTP: the link is only shown to the inviter. */
  mailer: Mailer | null;
  logger: Pick<Logger, 'warn'>;
}

/** An invitation as the inviter sees it; `invitationUrl` only in the answer that creates it. */
export interface InvitationView {
  id: string;
  email: string;
  role: Role;
  invitedBy: string;
  createdAt: Date;
  expiresAt: Date;
}

const view = (i: Invitation): InvitationView => ({
  id: i.id,
  email: i.email,
  role: i.role,
  invitedBy: i.invitedBy,
  createdAt: i.createdAt,
  expiresAt: i.expiresAt,
});

const EXPIRED = 'This invitation was already used, revoked, or is older than 7 days: ask for a new one.';

/**
 * Invitations (docs/console.md#invitations): an admin invites an address with a role; the link
 * (a random token, stored as its HMAC) is shown once to the inviter and emailed when SMTP is
 * configured; it works once, for 7 days. Accepting creates the person, or adds one who already
 * has an account (signed in, or with their password) to this workspace.
 */
export function createInvitationService(deps: InvitationServiceDeps) {
  const { db, clock } = deps;
  const urlOf = (token: string) => `${deps.publicBaseUrl}/invitations/${token}`;

  /** The invitation of a token when it can still be accepted; 404 unknown, 410 used or expired. */
  async function openInvitation(tx: Db, token: string, forUpdate: boolean): Promise<Invitation> {
    const inv = await store.findInvitationByTokenHash(tx, hashToken(deps.pepper, token), forUpdate);
    if (!inv) throw notFound('invitation');
    if (inv.acceptedAt || inv.revokedAt || inv.expiresAt.getTime() <= clock().getTime()) {
      throw new AppError('invitation_expired', EXPIRED);
    }
    return inv;
  }

  async function inviterName(invitedBy: string): Promise<string> {
    if (!invitedBy.startsWith('user:')) return 'The operator';
    return (await members.emailOf(db, invitedBy.slice(5))) ?? 'A former member';
  }

  /** Emails the link; a failing SMTP server is logged, never fatal (the inviter has the link). */
  async function email(inv: Invitation, url: string, workspaceName: string): Promise<boolean> {
    if (!deps.mailer) return false;
    try {
      await deps.mailer.send(
        invitationMessage({
          to: inv.email,
          workspaceName,
          invitedBy: await inviterName(inv.invitedBy),
          role: inv.role,
          url,
          expiresAt: inv.expiresAt,
        }),
      );
      return true;
    } catch (err) {
      deps.logger.warn({ err: String(err), invitationId: inv.id }, 'invitation email not sent');
      return false;
    }
  }

  return {
    /**
     * Invites `email` with `role`. An owner invitation needs an owner (or the operator); a person
     * already a member is a conflict; an open invitation of the same address is replaced.
     */
    async create(input: {
      workspaceId: string;
      email: string;
      role: Role;
      /** The inviter's role, or `operator` (the admin CLI). */
      by: Role | 'operator';
      actor: Actor;
    }): Promise<InvitationView & { invitationUrl: string; emailed: boolean }> {
      if (input.role === 'owner' && input.by !== 'owner' && input.by !== 'operator') {
        throw new AppError('insufficient_role', 'Only an owner may invite an owner.');
      }
      const token = randomToken();
      const now = clock();
      const { inv, workspaceName } = await withTransaction(db, async (tx) => {
        const ws = await findWorkspace(tx, input.workspaceId);
        if (!ws) throw notFound('workspace');
        const user = await members.findUserByEmail(tx, input.email);
        if (user && (await members.findMember(tx, input.workspaceId, user.id))) {
          throw new AppError('conflict', 'This person is already a member of the workspace.');
        }
        await store.revokeOpenInvitationsFor(tx, input.workspaceId, input.email, now);
        const inv: Invitation = {
          id: randomUUID(),
          workspaceId: input.workspaceId,
          email: input.email,
          role: input.role,
          tokenHash: hashToken(deps.pepper, token),
          invitedBy: input.actor.actor,
          createdAt: now,
          expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
          acceptedAt: null,
          revokedAt: null,
        };
        await store.insertInvitation(tx, inv);
        await auditMembers(
          tx,
          input.workspaceId,
          'invitation_create',
          input.actor,
          { invitationId: inv.id, email: inv.email, role: inv.role },
          now,
        );
        return { inv, workspaceName: ws.name };
      });
      const invitationUrl = urlOf(token);
      const emailed = await email(inv, invitationUrl, workspaceName);
      return { ...view(inv), invitationUrl, emailed };
    },

    async listOpen(workspaceId: string): Promise<InvitationView[]> {
      return (await store.listOpenInvitations(db, workspaceId, clock())).map(view);
    },

    /** Revokes an open invitation of the caller's workspace; 404 for any other id. */
    async revoke(caller: Caller, id: string): Promise<void> {
      await withTransaction(db, async (tx) => {
        const inv = await store.revokeInvitation(tx, caller.workspaceId, id, clock());
        if (!inv) throw notFound('invitation');
        await auditMembers(
          tx,
          caller.workspaceId,
          'invitation_revoke',
          caller.actor,
          { invitationId: id, email: inv.email, role: inv.role },
          clock(),
        );
      });
    },

    /** What the invitation page shows before accepting: who invites, to which workspace, as what. */
    async describe(token: string) {
      const inv = await openInvitation(db, token, false);
      const ws = await findWorkspace(db, inv.workspaceId);
      if (!ws) throw notFound('invitation');
      const existing = await members.findUserByEmail(db, inv.email);
      return {
        workspaceName: ws.name,
        email: inv.email,
        role: inv.role,
        invitedBy: await inviterName(inv.invitedBy),
        expiresAt: inv.expiresAt,
        hasAccount: existing !== null,
      };
    },

    /**
     * Accepts: as the signed-in person `userId`, or else as the invited address with `password`
     * (a new account, or the existing account's password). Once only: the row is locked and
     * marked in the same transaction as the membership.
     */
    async accept(input: {
      token: string;
      userId: string | null;
      password: string | null;
      actor: Omit<Actor, 'actor'>;
    }): Promise<{ userId: string; workspaceId: string; role: Role }> {
      const newHash = input.userId || !input.password ? null : await hashPassword(input.password);
      return withTransaction(db, async (tx) => {
        const inv = await openInvitation(tx, input.token, true);
        let userId = input.userId;
        if (!userId) {
          if (!input.password) {
            throw new AppError('unauthenticated', 'Sign in, or give a password, to accept.');
          }
          const existing = await members.findUserByEmail(tx, inv.email);
          if (existing) {
            if (!(await verifyPassword(input.password, existing.passwordHash))) {
              throw new AppError('unauthenticated', 'The password is not right for this account.');
            }
            userId = existing.id;
          } else {
            userId = randomUUID();
            await insertUser(tx, {
              id: userId,
              email: inv.email,
              passwordHash: newHash!,
              createdAt: clock(),
            });
          }
        }
        if (await members.findMember(tx, inv.workspaceId, userId)) {
          throw new AppError('conflict', 'You are already a member of this workspace.');
        }
        await insertMembership(tx, {
          userId,
          workspaceId: inv.workspaceId,
          role: inv.role,
          createdAt: clock(),
        });
        await store.markInvitationAccepted(tx, inv.id, clock());
        await auditMembers(
          tx,
          inv.workspaceId,
          'invitation_accept',
          { actor: `user:${userId}`, ...input.actor },
          { invitationId: inv.id, email: inv.email, role: inv.role, userId },
          clock(),
        );
        return { userId, workspaceId: inv.workspaceId, role: inv.role };
      });
    },
  };
}

export type InvitationService = ReturnType<typeof createInvitationService>;
