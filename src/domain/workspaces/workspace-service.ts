import { randomUUID } from 'node:crypto';
import type { Em } from '../../db/orm.js';
import {
  ConsoleUserSchema,
  MembershipSchema,
  PlanChangeSchema,
  WorkspaceSchema,
  type PlanName,
  type Workspace,
} from '../../db/entities/index.js';
import { AppError, notFound } from '../../lib/errors.js';
import { FIRST_KEY_SCOPES } from '../keys/scopes.js';
import { audit, type Actor, type KeyService, type NewKey } from '../keys/key-service.js';
import type { InvalidationBus } from '../keys/invalidation-bus.js';
import { DUMMY_HASH, hashPassword, verifyPassword } from './password.js';

/** The plan a workspace is on at `now`: a trial past its end is `free` (DECISIONS §3). */
function currentPlan(w: Pick<Workspace, 'plan' | 'trialEndsAt'>, now: Date): PlanName {
  if (w.plan === 'trial' && (!w.trialEndsAt || w.trialEndsAt.getTime() <= now.getTime())) return 'free';
  return w.plan;
}

export interface WorkspaceServiceDeps {
  keys: KeyService;
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

  async function createWorkspace(
    em: Em,
    input: { name: string; plan: 'free' | 'trial' | 'service'; actor: Actor; reveal: boolean },
  ): Promise<{ workspace: Workspace; firstKey: NewKey }> {
    return em.transactional(async (tx) => {
      const now = clock();
      const workspace = tx.create(WorkspaceSchema, {
        id: randomUUID(),
        name: input.name,
        plan: input.plan,
        trialEndsAt: input.plan === 'trial' ? new Date(now.getTime() + deps.trialDays * 86_400_000) : null,
        status: 'active',
        rotationPolicyDays: 90,
        createdAt: now,
      });
      tx.create(PlanChangeSchema, {
        workspaceId: workspace.id,
        fromPlan: null,
        toPlan: input.plan,
        reason: 'created',
        actor: input.actor.actor,
        at: now,
      });
      await tx.flush();
      const firstKey = await deps.keys.createKey(tx, {
        workspaceId: workspace.id,
        label: 'Default key',
        scopes: FIRST_KEY_SCOPES,
        expiresAt: null,
        actor: input.actor,
        reveal: input.reveal,
      });
      return { workspace, firstKey };
    });
  }

  return {
    createWorkspace,

    /** Sign-up: a person, their workspace and its first key, in one transaction. */
    async signup(
      em: Em,
      input: {
        email: string;
        password: string;
        workspaceName: string;
        plan: 'free' | 'trial';
        ip: string | null;
        userAgent: string | null;
      },
    ) {
      const passwordHash = await hashPassword(input.password);
      return em.transactional(async (tx) => {
        const taken = await tx
          .getConnection()
          .execute(
            'SELECT 1 FROM console_users WHERE lower(email) = lower(?)',
            [input.email],
            'all',
            tx.getTransactionContext(),
          );
        if (taken.length > 0)
          throw new AppError('conflict', 'An account with this email already exists; sign in instead.');
        const userId = randomUUID();
        const actor: Actor = { actor: `user:${userId}`, ip: input.ip, userAgent: input.userAgent };
        tx.create(ConsoleUserSchema, { id: userId, email: input.email, passwordHash, createdAt: clock() });
        await tx.flush();
        const { workspace, firstKey } = await createWorkspace(tx, {
          name: input.workspaceName,
          plan: input.plan,
          actor,
          reveal: true,
        });
        tx.create(MembershipSchema, { userId, workspaceId: workspace.id, role: 'owner', createdAt: clock() });
        await tx.flush();
        return { userId, workspace, firstKey };
      });
    },

    /** Returns the user and their workspace, or null; takes as long for an unknown email. */
    async checkLogin(
      em: Em,
      email: string,
      password: string,
    ): Promise<{ userId: string; workspaceId: string } | null> {
      const rows = await em
        .getConnection()
        .execute<{ id: string; password_hash: string; workspace_id: string }[]>(
          `SELECT u.id, u.password_hash, m.workspace_id FROM console_users u
             JOIN memberships m ON m.user_id = u.id
            WHERE lower(u.email) = lower(?) ORDER BY m.created_at LIMIT 1`,
          [email],
        );
      const row = rows[0];
      const ok = await verifyPassword(password, row?.password_hash ?? DUMMY_HASH);
      return ok && row ? { userId: row.id, workspaceId: row.workspace_id } : null;
    },

    /**
     * Plan changes are recorded behind this one function, where a payment provider can plug in,
     * both as a plan change and in the audit log (DECISIONS §3, §10). The current plan is the
     * effective one: a trial whose 14 days have passed is already `free`, so asking for `free`
     * then changes nothing. Going to `free` during a trial ends the trial at once (it is not
     * paused: no plan change leads back to `trial`); going to `service` clears it.
     */
    async changePlan(
      em: Em,
      input: { workspaceId: string; plan: 'free' | 'service'; actor: Actor },
    ): Promise<Workspace> {
      const ws = await em.transactional(async (tx) => {
        const w = await tx.findOne(WorkspaceSchema, { id: input.workspaceId });
        if (!w) throw notFound('workspace');
        const now = clock();
        const current = currentPlan(w, now);
        if (current === input.plan) return w;
        const reason = input.plan === 'service' ? 'upgrade' : 'downgrade';
        tx.create(PlanChangeSchema, {
          workspaceId: w.id,
          fromPlan: current,
          toPlan: input.plan,
          reason,
          actor: input.actor.actor,
          at: now,
        });
        audit(tx, {
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
