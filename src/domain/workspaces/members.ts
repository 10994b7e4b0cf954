import { withTransaction, type Db } from '../../db/pool.js';
import { AppError, notFound } from '../../lib/errors.js';
import type { Actor } from '../keys/key-service.js';
import { auditMembers } from './audit.js';
import * as store from './member-store.js';
import { deleteUserSessions } from './workspace-store.js';
import { roleAtLeast, type Role } from './roles.js';
import { switchRole, type SwitchFrom } from './workspace-switch.js';

export interface MemberServiceDeps {
  db: Db;
  clock: () => Date;
}

/** Who asks: the signed-in member, their role in the workspace, and how the audit log names them. */
export interface Caller {
  workspaceId: string;
  userId: string;
  role: Role;
  actor: Actor;
}

const LAST_OWNER = 'A workspace keeps at least one owner: make another member owner first.';

/**
 * A workspace's members (docs/console.md#members-and-roles): list, change a role, remove, hand
 * on ownership. Rules: admins manage members, but only an owner makes, unmakes or removes an
 * owner; anyone may leave; the last owner can neither leave nor be demoted. A removed member's
 * sessions in the workspace end in the same transaction. Another workspace's ids are 404.
 */
export function createMemberService(deps: MemberServiceDeps) {
  const { db, clock } = deps;

  /** The member `userId` locked, or 404; and the owners locked when the change touches one. */
  async function target(tx: Db, caller: Caller, userId: string) {
    const member = await store.findMember(tx, caller.workspaceId, userId, true);
    if (!member) throw notFound('member');
    return member;
  }

  async function keepAnOwner(tx: Db, workspaceId: string, losing: string): Promise<void> {
    const owners = await store.lockOwners(tx, workspaceId);
    if (owners.length <= 1 && owners.includes(losing)) throw new AppError('conflict', LAST_OWNER);
  }

  function needOwnerFor(caller: Caller, what: string): void {
    if (caller.role !== 'owner') {
      throw new AppError('insufficient_role', `Only an owner may ${what}.`);
    }
  }

  return {
    list: (workspaceId: string) => store.listMembers(db, workspaceId),

    /** The workspaces a person belongs to, with their role in each. */
    workspacesOf: (userId: string) => store.workspacesOf(db, userId),

    /** The role a session may switch into `workspaceId` with (docs/console.md#sso-and-sessions). */
    switchRole: (from: SwitchFrom, workspaceId: string) => switchRole(db, from, workspaceId),

    /** The role of a person in a workspace, or null when they are not a member. */
    async roleIn(userId: string, workspaceId: string): Promise<Role | null> {
      return (await store.findMember(db, workspaceId, userId))?.role ?? null;
    },

    async changeRole(caller: Caller, userId: string, role: Role): Promise<store.MemberRow> {
      return withTransaction(db, async (tx) => {
        const member = await target(tx, caller, userId);
        if (member.role === role) return member;
        if (member.role === 'owner' || role === 'owner') needOwnerFor(caller, 'make or unmake an owner');
        if (member.role === 'owner') await keepAnOwner(tx, caller.workspaceId, userId);
        await store.updateRole(tx, caller.workspaceId, userId, role);
        await auditMembers(
          tx,
          caller.workspaceId,
          'member_role_change',
          caller.actor,
          { userId, email: member.email, from: member.role, to: role },
          clock(),
        );
        return { ...member, role };
      });
    },

    /** Removes a member (or the caller leaves); their sessions in this workspace end at once. */
    async remove(caller: Caller, userId: string): Promise<void> {
      await withTransaction(db, async (tx) => {
        const member = await target(tx, caller, userId);
        const leaving = userId === caller.userId;
        if (!leaving && !roleAtLeast(caller.role, 'admin')) {
          throw new AppError('insufficient_role', 'Only an admin or owner may remove another member.');
        }
        if (!leaving && member.role === 'owner') needOwnerFor(caller, 'remove an owner');
        if (member.role === 'owner') await keepAnOwner(tx, caller.workspaceId, userId);
        await store.deleteMembership(tx, caller.workspaceId, userId);
        await deleteUserSessions(tx, userId, caller.workspaceId);
        await auditMembers(
          tx,
          caller.workspaceId,
          'member_remove',
          caller.actor,
          { userId, email: member.email, role: member.role, ...(leaving ? { left: true } : {}) },
          clock(),
        );
      });
    },

    /** The caller hands ownership to another member and stays on as an admin. */
    async transferOwnership(caller: Caller, userId: string): Promise<void> {
      needOwnerFor(caller, 'transfer ownership');
      await withTransaction(db, async (tx) => {
        const member = await target(tx, caller, userId);
        if (userId === caller.userId) throw new AppError('conflict', 'You already own this workspace.');
        await store.lockOwners(tx, caller.workspaceId);
        await store.updateRole(tx, caller.workspaceId, userId, 'owner');
        await store.updateRole(tx, caller.workspaceId, caller.userId, 'admin');
        await auditMembers(
          tx,
          caller.workspaceId,
          'ownership_transfer',
          caller.actor,
          { userId, email: member.email, from: member.role, previousOwner: caller.userId },
          clock(),
        );
      });
    },
  };
}

export type MemberService = ReturnType<typeof createMemberService>;
