import { randomUUID } from 'node:crypto';
import type { Em, Orm } from '../../db/orm.js';
import type { PlanName, Workspace } from '../../db/entities/index.js';
import { AppError, notFound } from '../../lib/errors.js';
import { FIRST_KEY_SCOPES } from '../keys/scopes.js';
import { insertKey, type Actor, type NewKey } from '../keys/key-service.js';
import type { InvalidationBus } from '../keys/invalidation-bus.js';
import { addAuditEvent } from '../keys/keys-store.js';
import { DUMMY_HASH, hashPassword, needsRehash, verifyPassword } from './password.js';
import * as store from './workspace-store.js';

/** The plan a workspace is on at `now`: a trial past its end is `free` (DECISIONS §3). */
function currentPlan(w: Pick<Workspace, 'plan' | 'trialEndsAt'>, now: Date): PlanName {
  if (w.plan === 'trial' && (!w.trialEndsAt || w.trialEndsAt.getTime() <= now.getTime())) return 'free';
  return w.plan;
}

export interface WorkspaceServiceDeps {
  /** The ORM whose entity manager the service forks per call: routes never hold one. */
  orm: Orm;
  /** Server secret, for the first key of a new workspace. */
  pepper: string;
  bus: InvalidationBus | null;
  clock: () => Date;
  trialDays: number;
}

/**
 * Workspaces and the people who hold them (DECISIONS §3). A workspace owns its keys;
 * creating one creates its first key, to be revealed once.
 */
export function createWorkspaceService(deps: WorkspaceServiceDeps) {
  const { clock } = deps;
  const fork = () => deps.orm.em.fork();

  /** A workspace and its first key, in the caller's transaction `tx`. */
  async function insertWorkspace(
    tx: Em,
    input: { name: string; plan: 'free' | 'trial' | 'service'; actor: Actor; reveal: boolean },
  ): Promise<{ workspace: Workspace; firstKey: NewKey }> {
    const now = clock();
    const workspace = store.addWorkspace(tx, {
      id: randomUUID(),
      name: input.name,
      plan: input.plan,
      trialEndsAt: input.plan === 'trial' ? new Date(now.getTime() + deps.trialDays * 86_400_000) : null,
      status: 'active',
      rotationPolicyDays: 90,
      createdAt: now,
    });
    store.addPlanChange(tx, {
      workspaceId: workspace.id,
      fromPlan: null,
      toPlan: input.plan,
      reason: 'created',
      actor: input.actor.actor,
      at: now,
    });
    await tx.flush();
    const firstKey = await tx.transactional((inner) =>
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
      return fork().transactional((tx) => insertWorkspace(tx, input));
    },

    /** The workspace `workspaceId`; not found if it does not exist. */
    async workspaceOf(workspaceId: string): Promise<Workspace> {
      const ws = await store.findWorkspace(fork(), workspaceId);
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
      return fork().transactional(async (tx) => {
        if (await store.emailTaken(tx, input.email))
          throw new AppError('conflict', 'An account with this email already exists; sign in instead.');
        const userId = randomUUID();
        const actor: Actor = { actor: `user:${userId}`, ip: input.ip, userAgent: input.userAgent };
        store.addUser(tx, { id: userId, email: input.email, passwordHash, createdAt: clock() });
        await tx.flush();
        const { workspace, firstKey } = await tx.transactional((inner) =>
          insertWorkspace(inner, { name: input.workspaceName, plan: input.plan, actor, reveal: true }),
        );
        store.addMembership(tx, { userId, workspaceId: workspace.id, role: 'owner', createdAt: clock() });
        await tx.flush();
        return { userId, workspace, firstKey };
      });
    },

    /** Returns the user and their workspace, or null; takes as long for an unknown email. */
    async checkLogin(
      email: string,
      password: string,
    ): Promise<{ userId: string; workspaceId: string } | null> {
      const row = await store.findLogin(fork(), email);
      const ok = await verifyPassword(password, row?.passwordHash ?? DUMMY_HASH);
      if (!ok || !row) return null;
      // The one moment the password is at hand: an old-parameter hash is replaced by today's.
      if (needsRehash(row.passwordHash)) {
        await store.updatePasswordHash(fork(), row.userId, row.passwordHash, await hashPassword(password));
      }
      return { userId: row.userId, workspaceId: row.workspaceId };
    },

    /**
     * Plan changes are recorded behind this one function, where a payment provider can plug in,
     * both as a plan change and in the audit log (DECISIONS §3, §10). The current plan is the
     * effective one: a trial whose 14 days have passed is already `free`, so asking for `free`
     * then changes nothing. Going to `free` during a trial ends the trial at once (it is not
     * paused: no plan change leads back to `trial`); going to `service` clears it.
     */
    async changePlan(input: {
      workspaceId: string;
      plan: 'free' | 'service';
      actor: Actor;
    }): Promise<Workspace> {
      const ws = await fork().transactional(async (tx) => {
        const w = await store.findWorkspace(tx, input.workspaceId);
        if (!w) throw notFound('workspace');
        const now = clock();
        const current = currentPlan(w, now);
        if (current === input.plan) return w;
        const reason = input.plan === 'service' ? 'upgrade' : 'downgrade';
        store.addPlanChange(tx, {
          workspaceId: w.id,
          fromPlan: current,
          toPlan: input.plan,
          reason,
          actor: input.actor.actor,
          at: now,
        });
        addAuditEvent(tx, {
          workspaceId: w.id,
          keyId: null,
          action: 'plan_change',
          ...input.actor,
          details: { from: current, to: input.plan, reason },
        });
        w.plan = input.plan;
        if (input.plan === 'service') w.trialEndsAt = null;
        else if (current === 'trial') w.trialEndsAt = now;
        return w;
      });
      await deps.bus?.publish({ kind: 'workspace', id: input.workspaceId });
      return ws;
    },
  };
}

export type WorkspaceService = ReturnType<typeof createWorkspaceService>;
