import type { Db } from '../../db/pool.js';
import type { FieldError } from '../../lib/errors.js';
import { getCase, listCases } from '../cases/case-store.js';
import { loadDeliveryCase } from './delivery-case-store.js';
import { mappedPriority, mappingErrors, renderLabels, renderSummary } from './template.js';
import { targetKind, type WorkflowKind } from './targets/registry.js';
import type { WorkflowFields } from './types.js';

/** What a workflow's field mapping makes of one case: the console's live preview (docs/console.md#workflows). */
export interface WorkflowPreview {
  case: { id: string; title: string };
  summary: string;
  labels: string[];
  /** The target's priority for the case's priority, when the mapping names one. */
  priority: string | null;
}

/**
 * Renders `fields` for a sample case of the workspace (`caseId`, else its newest case) exactly as
 * a delivery would (same templates, same limits). `errors` for a mapping the service would refuse
 * on save; `no_case` when the workspace has no such case (or none at all).
 */
export async function workflowPreview(
  db: Db,
  input: {
    workspaceId: string;
    kind: WorkflowKind;
    fields: WorkflowFields;
    caseId: string | null;
    baseUrl: string;
  },
): Promise<WorkflowPreview | { errors: FieldError[] } | 'no_case'> {
  const { summaryMax: max, priorityAsLabel } = targetKind(input.kind);
  const errors = mappingErrors(input.fields, { summary: max });
  if (errors.length > 0) return { errors };
  const sample = input.caseId
    ? await getCase(db, input.workspaceId, input.caseId)
    : ((await listCases(db, input.workspaceId, { limit: 1 })).data[0] ?? null);
  const c = sample ? await loadDeliveryCase(db, sample.id, input.baseUrl) : null;
  if (!c) return 'no_case';
  return {
    case: { id: c.id, title: c.title },
    summary: renderSummary(input.fields, c, max),
    labels: renderLabels(input.fields, c, priorityAsLabel),
    priority: mappedPriority(input.fields, c) ?? null,
  };
}
