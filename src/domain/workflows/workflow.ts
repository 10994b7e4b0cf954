import type { CaseStatus } from '../cases/case-status.js';
import type { WorkflowKind, WorkflowTarget } from './targets/registry.js';
import type { WorkflowFields, WorkflowRule } from './types.js';

export type { WorkflowKind, WorkflowTarget } from './targets/registry.js';

/** A workflow as stored (the credential and secret still sealed). */
export interface Workflow {
  id: string;
  workspaceId: string;
  name: string;
  kind: WorkflowKind;
  enabled: boolean;
  target: WorkflowTarget;
  credentialSealed: string | null;
  credentialHint: string | null;
  secretSealed: string;
  rule: WorkflowRule;
  fields: WorkflowFields;
  /** Remote status (Jira status name, `category:done`, GitHub `closed:not_planned`, …) → case status. */
  statusMap: Record<string, CaseStatus>;
  lastError: string | null;
  lastDeliveryStatus: string | null;
  lastDeliveryAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}
