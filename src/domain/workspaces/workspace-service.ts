import { randomUUID } from 'node:crypto';
import { withTransaction, type Db } from '../../db/pool.js';
import type { PlanName, Role, Workspace } from '../../db/entities/index.js';
import { AppError, notFound } from '../../lib/errors.js';
import { FIRST_KEY_SCOPES } from '../keys/scopes.js';
import { insertKey, type Actor, type NewKey } from '../keys/key-service.js';
import type { InvalidationBus } from '../keys/invalidation-bus.js';
import { insertAuditEvent } from '../keys/keys-store.js';
import { DUMMY_HASH, hashPassword, needsRehash, verifyPassword } from './password.js';
import * as store from './workspace-store.js';

/** The plan a workspace is on at `now`: a trial past its end is `free`. */
function currentPlan(w: Pick<Workspace, 'plan' | 'trialEndsAt'>, now: Date): PlanName {
  if (w.plan === 'trial' && (!w.trialEndsAt || w.trialEndsAt.getTime() <= now.getTime())) return 'free';
  return w.plan;
}

export interface WorkspaceServiceDeps {
  /** The pool: each use case runs its statements in a transaction of its own. */
  db: Db;
  /** Server secret, for the first key of a new workspace. */
  pepper: string;
  bus: InvalidationBus | null;
  clock: () => Date;
  trialDays: number;
}

/**
 * Workspaces and the people who hold them. A workspace owns its keys;
 * creating one creates its first key, to be revealed once.
 */
export function createWorkspaceService(deps: WorkspaceServiceDeps) {
  const { clock } = deps;

  /** A workspace and its first key, in the caller's transaction `tx`. */
  async function insertWorkspace(
    tx: Db,
    input: { name: string; plan: 'free' | 'trial' | 'service'; actor: Actor; reveal: boolean },
  ): Promise<{ workspace: Workspace; firstKey: NewKey }> {
    const now = clock();
    const workspace: Workspace = {
      id: randomUUID(),
      name: input.name,
      plan: input.plan,
      trialEndsAt: input.plan === 'trial' ? new Date(now.getTime() + deps.trialDays * 86_400_000) : null,
      status: 'active',
      rotationPolicyDays: 90,
      createdAt: now,
    };
    await store.insertWorkspace(tx, workspace);
    await store.insertPlanChange(tx, {
      workspaceId: workspace.id,
      fromPlan: null,
      toPlan: input.plan,
      reason: 'created',
      actor: input.actor.actor,
      at: now,
    });
    const firstKey = await withTransaction(tx, (inner) =>
      insertKey(inner, deps, {
        workspaceId: workspace.id,
        label: 'Default key',
        scopes: FIRST_KEY_SCOPES,
        expiresAt: null,
        actor: input.actor,
        reveal: input.reveal,
      }),
    );
    return { workspace, firstKey };
  }

  return {
    /** A workspace and its first key (the admin CLI's `create-workspace`). */
    async createWorkspace(input: {
      name: string;
      plan: 'free' | 'trial' | 'service';
      actor: Actor;
      reveal: boolean;
    }): Promise<{ workspace: Workspace; firstKey: NewKey }> {
      return withTransaction(deps.db, (tx) => insertWorkspace(tx, input));
    },

    /** The workspace `workspaceId`; not found if it does not exist. */
    async workspaceOf(workspaceId: string): Promise<Workspace> {
      const ws = await store.findWorkspace(deps.db, workspaceId);
      if (!ws) throw notFound('workspace');
      return ws;
    },

    /** Sign-up: a person, their workspace and its first key, in one transaction. */
    async signup(input: {
      email: string;
      password: string;
      workspaceName: string;
      plan: 'free' | 'trial';
      ip: string | null;
      userAgent: string | null;
    }) {
      const passwordHash = await hashPassword(input.password);
      return withTransaction(deps.db, async (tx) => {
        if (await store.emailTaken(tx, input.email))
          throw new AppError('conflict', 'An account with this email already exists; sign in instead.');
        const userId = randomUUID();
        const actor: Actor = { actor: `user:${userId}`, ip: input.ip, userAgent: input.userAgent };
        await store.insertUser(tx, { id: userId, email: input.email, passwordHash, createdAt: clock() });
        const { workspace, firstKey } = await withTransaction(tx, (inner) =>
          insertWorkspace(inner, { name: input.workspaceName, plan: input.plan, actor, reveal: true }),
        );
        await store.insertMembership(tx, {
          userId,
          workspaceId: workspace.id,
          role: 'owner',
          createdAt: clock(),
        });
        return { userId, workspace, firstKey };
      });
    },

    /** Returns the user and their workspace, or null; takes as long for an unknown email. */
    async checkLogin(
      email: string,
      password: string,
    ): Promise<{ userId: string; workspaceId: string; role: Role } | null> {
      const row = await store.findLogin(deps.db, email);
      const ok = await verifyPassword(password, row?.passwordHash ?? DUMMY_HASH);
      if (!ok || !row) return null;
      // The one moment the password is at hand: an old-parameter hash is replaced by today's.
      if (needsRehash(row.passwordHash)) {
        await store.updatePasswordHash(deps.db, row.userId, row.passwordHash, await hashPassword(password));
      }
      return { userId: row.userId, workspaceId: row.workspaceId, role: row.role };
    },

    /**
     * Plan changes are recorded behind this one function, where a payment provider can plug in,
     * both as a plan change and in the audit log. The current plan is the
     * effective one: a trial whose 14 days have passed is already `free`, so asking for `free`
     * then changes nothing. Going to `free` during a trial ends the trial at once (it is not
     * paused: no plan change leads back to `trial`); going to `service` clears it.
     */
    async changePlan(input: {
      workspaceId: string;
      plan: 'free' | 'service';
      actor: Actor;
    }): Promise<Workspace> {
      const ws = await withTransaction(deps.db, async (tx) => {
        const w = await store.findWorkspace(tx, input.workspaceId);
        if (!w) throw notFound('workspace');
        const now = clock();
        const current = currentPlan(w, now);
        if (current === input.plan) return w;
        const reason = input.plan === 'service' ? 'upgrade' : 'downgrade';
        await store.insertPlanChange(tx, {
          workspaceId: w.id,
          fromPlan: current,
          toPlan: input.plan,
          reason,
          actor: input.actor.actor,
          at: now,
        });
        await insertAuditEvent(tx, {
          workspaceId: w.id,
          keyId: null,
          action: 'plan_change',
          ...input.actor,
          details: { from: current, to: input.plan, reason },
          at: new Date(),
        });
        w.plan = input.plan;
        if (input.plan === 'service') w.trialEndsAt = null;
        else if (current === 'trial') w.trialEndsAt = now;
        await store.updatePlan(tx, w);
        return w;
      });
      await deps.bus?.publish({ kind: 'workspace', id: input.workspaceId });
      return ws;
    },
  };
}

export type WorkspaceService = ReturnType<typeof createWorkspaceService>;
