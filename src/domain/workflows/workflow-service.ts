import { randomUUID } from 'node:crypto';
import { withTransaction, type Pool } from '../../db/pool.js';
import { seqCursor, seqPage } from '../../lib/cursor.js';
import { AppError, invalidRequest, notFound } from '../../lib/errors.js';
import type { OutboundUrlOptions } from '../../lib/outbound-url.js';
import type { CaseStatus } from '../cases/case-status.js';
import { recordAuditEvent } from '../keys/audit-log.js';
import type { Actor } from '../keys/key-service.js';
import { attemptDelivery, recordAttemptOutcome, type DeliveryDeps } from './deliver.js';
import { credentialHint, sealWorkflowSecret } from './sealing.js';
import { newWorkflowSecret } from './signing.js';
import { targetKind, type TargetInput, type WorkflowKind } from './targets/registry.js';
import { mappingErrors } from './template.js';
import { rateLimitOf } from './rate-limit.js';
import { workflowPreview } from './preview.js';
import type { TargetRateLimit, WorkflowFields, WorkflowRule } from './types.js';
import type { Workflow } from './workflow.js';
import { insertTestDelivery, listDeliveries, type DeliveryRow } from './delivery-store.js';
import { caseLinks } from './link-store.js';
import {
  deleteWorkflow,
  getWorkflow,
  insertWorkflow,
  listWorkflows,
  updateWorkflow,
} from './workflow-store.js';

export type { TargetInput } from './targets/registry.js';

/**
 * A target as the request schema checked it: the kind's own schema (`requestSchema` of its
 * registry entry) was applied, so the fields are that kind's `TargetInput`.
 */
export type CheckedTargetInput = { kind: WorkflowKind; [field: string]: unknown };

export interface WorkflowInput {
  name: string;
  enabled?: boolean;
  target: CheckedTargetInput;
  rule?: WorkflowRule;
  fields?: WorkflowFields;
  statusMap?: Record<string, CaseStatus>;
}

export interface WorkflowPatchInput {
  name?: string;
  enabled?: boolean;
  rule?: WorkflowRule;
  fields?: WorkflowFields;
  statusMap?: Record<string, CaseStatus>;
  /** A new Jira API token, GitHub token or Slack webhook URL (the old one is replaced, never shown). */
  credential?: string;
  /** The target's new rate limit. */
  rateLimit?: TargetRateLimit;
}

export interface WorkflowServiceDeps {
  pool: Pool;
  pepper: string;
  /** Where inbound webhooks are received (`PUBLIC_BASE_URL`). */
  baseUrl: string;
  /** The outbound URL rule's settings (WEBHOOK_ALLOW_PRIVATE_HOSTS, WEBHOOK_ALLOW_LOOPBACK_HTTP). */
  outbound: OutboundUrlOptions;
  /** For the synchronous test delivery. */
  delivery: DeliveryDeps;
}

const limitOf = (kind: Workflow['kind']) => targetKind(kind).summaryMax;

/**
 * Managing mapped workflows (`/api/v1/workflows`): every answer is a view without the
 * credential or secret; the `whsec_` secret appears once, in the answer to the creation.
 */
export function createWorkflowService(deps: WorkflowServiceDeps) {
  /** The kind's own checks, then the rate limit in force stored with the target. */
  function targetOf(checked: CheckedTargetInput) {
    // Validated against the kind's own request schema before it got here.
    const t = checked as unknown as TargetInput;
    const made = targetKind(t.kind).setup(t, { outbound: deps.outbound });
    const rateLimit = t.rateLimit ?? targetKind(t.kind).defaultRateLimit;
    return { ...made, target: { ...made.target, rateLimit } };
  }

  function view(w: Workflow) {
    const { target } = w;
    return {
      object: 'workflow' as const,
      id: w.id,
      name: w.name,
      kind: w.kind,
      enabled: w.enabled,
      target: {
        ...target,
        rateLimit: rateLimitOf(target),
        ...(w.credentialHint ? { credential: w.credentialHint } : {}),
      },
      rule: w.rule,
      fields: w.fields,
      statusMap: w.statusMap,
      inboundUrl: targetKind(w.kind).inbound
        ? `${deps.baseUrl.replace(/\/+$/, '')}/api/hooks/${w.kind}/${w.id}`
        : null,
      lastDeliveryStatus: w.lastDeliveryStatus,
      lastDeliveryAt: w.lastDeliveryAt?.toISOString() ?? null,
      lastError: w.lastError,
      createdAt: w.createdAt.toISOString(),
      updatedAt: w.updatedAt.toISOString(),
    };
  }

  return {
    view,

    /** A case's external issues (`links` of `GET /api/v1/cases/:id`). */
    links: (caseId: string) => caseLinks(deps.pool, caseId),

    /** The console's live preview of a mapping for a sample case ({@link workflowPreview}), links on `baseUrl`. */
    preview: (input: Omit<Parameters<typeof workflowPreview>[1], 'baseUrl'>) =>
      workflowPreview(deps.pool, { ...input, baseUrl: deps.baseUrl }),

    /** Creates a workflow and records `workflow_create` (as `actor`) in the same transaction. */
    async create(workspaceId: string, input: WorkflowInput, actor: Actor) {
      const { target, credential, errors } = targetOf(input.target);
      const fields = input.fields ?? {};
      errors.push(...mappingErrors(fields, { summary: limitOf(target.kind) }));
      if (errors.length > 0) throw invalidRequest(errors);
      const id = randomUUID();
      const secret = newWorkflowSecret();
      const w = await withTransaction(deps.pool, async (tx) => {
        const made = await insertWorkflow(tx, {
          id,
          workspaceId,
          name: input.name,
          kind: target.kind,
          enabled: input.enabled ?? true,
          target,
          credentialSealed: credential === null ? null : sealWorkflowSecret(deps.pepper, id, credential),
          credentialHint: credential === null ? null : credentialHint(credential),
          secretSealed: sealWorkflowSecret(deps.pepper, id, secret),
          rule: input.rule ?? {},
          fields,
          statusMap: input.statusMap ?? {},
        });
        await recordAuditEvent(tx, workspaceId, 'workflow_create', actor, auditDetails(made));
        return made;
      });
      return { ...view(w), secret };
    },

    async list(workspaceId: string) {
      return (await listWorkflows(deps.pool, workspaceId)).map(view);
    },

    async get(workspaceId: string, id: string) {
      const w = await getWorkflow(deps.pool, workspaceId, id);
      if (!w) throw notFound('workflow');
      return view(w);
    },

    /**
     * Changes a workflow and records it (as `actor`) in the same transaction: `workflow_enable`
     * or `workflow_disable` when only `enabled` was given, else `workflow_update` naming the
     * changed parts (a new credential as `credential`, never its value).
     */
    async update(workspaceId: string, id: string, patch: WorkflowPatchInput, actor: Actor) {
      const existing = await getWorkflow(deps.pool, workspaceId, id);
      if (!existing) throw notFound('workflow');
      if (patch.fields) {
        const errors = mappingErrors(patch.fields, { summary: limitOf(existing.kind) });
        if (errors.length > 0) throw invalidRequest(errors);
      }
      if (patch.credential !== undefined) {
        const { credentialProblem } = targetKind(existing.kind);
        const problem = credentialProblem
          ? credentialProblem(patch.credential, { outbound: deps.outbound })
          : `a ${existing.kind} workflow has no credential`;
        if (problem) throw invalidRequest([{ path: '/credential', message: problem }]);
      }
      const w = await withTransaction(deps.pool, async (tx) => {
        const changed = await updateWorkflow(tx, workspaceId, id, {
          name: patch.name,
          enabled: patch.enabled,
          rule: patch.rule,
          fields: patch.fields,
          statusMap: patch.statusMap,
          ...(patch.rateLimit !== undefined
            ? { target: { ...existing.target, rateLimit: patch.rateLimit } }
            : {}),
          ...(patch.credential !== undefined
            ? {
                credentialSealed: sealWorkflowSecret(deps.pepper, id, patch.credential),
                credentialHint: credentialHint(patch.credential),
              }
            : {}),
        });
        if (!changed) throw notFound('workflow');
        const parts = PATCH_PARTS.filter((k) => patch[k] !== undefined);
        const action =
          parts.length === 1 && parts[0] === 'enabled'
            ? patch.enabled
              ? 'workflow_enable'
              : 'workflow_disable'
            : 'workflow_update';
        await recordAuditEvent(tx, workspaceId, action, actor, {
          ...auditDetails(changed),
          ...(action === 'workflow_update' ? { changed: parts } : {}),
        });
        return changed;
      });
      return view(w);
    },

    /** Deletes a workflow and records `workflow_delete` (as `actor`) in the same transaction. */
    async remove(workspaceId: string, id: string, actor: Actor): Promise<void> {
      await withTransaction(deps.pool, async (tx) => {
        const gone = await deleteWorkflow(tx, workspaceId, id);
        if (!gone) throw notFound('workflow');
        await recordAuditEvent(tx, workspaceId, 'workflow_delete', actor, auditDetails(gone));
      });
    },

    /** One sample delivery now, answered with what the target said (and listed with the others). */
    async test(workspaceId: string, id: string) {
      const w = await getWorkflow(deps.pool, workspaceId, id);
      if (!w) throw notFound('workflow');
      const deliveryId = await insertTestDelivery(deps.pool, w);
      const out = await attemptDelivery(deps.delivery, deliveryId);
      if (out.kind === 'skipped' || out.kind === 'busy' || out.kind === 'queued')
        throw new AppError('conflict', 'The test delivery could not be made.');
      await recordAttemptOutcome(
        deps.pool,
        w.id,
        out.kind === 'retry' ? { ...out, kind: 'failed' } : out,
        null,
      );
      return out.kind === 'delivered'
        ? {
            object: 'workflow_test' as const,
            deliveryId,
            delivered: true,
            responseCode: out.status,
            error: null,
          }
        : {
            object: 'workflow_test' as const,
            deliveryId,
            delivered: false,
            responseCode: out.failure.status,
            error: out.failure.message,
          };
    },

    async deliveries(workspaceId: string, id: string, q: { limit: number; cursor?: string }) {
      const w = await getWorkflow(deps.pool, workspaceId, id);
      if (!w) throw notFound('workflow');
      const before = q.cursor === undefined ? undefined : seqCursor(q.cursor);
      const page = seqPage(
        await listDeliveries(deps.pool, w.id, { limit: q.limit, ...(before ? { before } : {}) }),
        q.limit,
      );
      return { object: 'list' as const, data: page.data.map(viewDelivery), nextCursor: page.nextCursor };
    },
  };
}

export type WorkflowService = ReturnType<typeof createWorkflowService>;

/** The parts of a PATCH an audit event names (by name only: `credential` never with its value). */
const PATCH_PARTS = [
  'name',
  'enabled',
  'rule',
  'fields',
  'statusMap',
  'credential',
  'rateLimit',
] as const satisfies readonly (keyof WorkflowPatchInput)[];

/** What an audit event says of a workflow: its id, name and target kind, nothing sealed. */
const auditDetails = (w: Pick<Workflow, 'id' | 'name' | 'kind'>) => ({
  workflowId: w.id,
  name: w.name,
  kind: w.kind,
});

function viewDelivery(d: DeliveryRow) {
  return {
    object: 'delivery' as const,
    id: d.id,
    caseId: d.case_id,
    event: d.event,
    status: d.status,
    attempts: d.attempts,
    responseCode: d.response_code,
    error: d.error,
    nextAttemptAt: d.next_attempt_at?.toISOString() ?? null,
    createdAt: d.created_at.toISOString(),
    finishedAt: d.finished_at?.toISOString() ?? null,
  };
}
