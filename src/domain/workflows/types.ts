import type { CaseStatus } from '../cases/case-status.js';

/**
 * Mapped workflows (docs/workflows.md).
 *
 * Glossary:
 * - **workflow**: a workspace's rule (which cases), target (where they go) and field mapping (how).
 * - **target**: a Jira Cloud project, a GitHub repository, or a generic webhook URL.
 * - **link**: the one external issue of a case in a workflow (`workflow_links`); created before
 *   the first remote call with a *marker* the remote issue carries, so a retry can find it.
 * - **delivery**: one event for one case sent through one workflow (`workflow_deliveries`), a
 *   BullMQ job on the `deliveries` queue with retries over at least 24 hours.
 * - **credential**: the Jira API token or GitHub token; **secret**: the `whsec_` signing secret
 *   (outbound webhook signatures, inbound Jira/GitHub webhook verification). Both sealed at rest.
 */
export type WorkflowKind = 'jira' | 'github' | 'webhook';

export const WORKFLOW_EVENTS = [
  'case.created',
  'case.updated',
  'case.triaged',
  'case.status_changed',
] as const;
export type WorkflowEvent = (typeof WORKFLOW_EVENTS)[number] | 'workflow.test';

/** The rule: the case list filters (docs/workflows.md#rules) a case must match; empty matches every case. */
export interface WorkflowRule {
  severity?: string[];
  priority?: string[];
  action?: string[];
  triaged?: boolean;
  stale?: boolean;
  status?: string[];
  kev?: boolean;
  cve?: string;
  asset?: string;
  environment?: string[];
  scanner?: string;
  scan?: string;
}

/** The field mapping: templates over the case fields, and per-value maps. */
export interface WorkflowFields {
  /** Jira summary / GitHub title. */
  summary?: string;
  /** Case priority (or severity when untriaged) → Jira priority name, or GitHub label. */
  priority?: Partial<Record<string, string>>;
  labels?: string[];
}

/**
 * The target's proactive rate limit (`rate-limit.ts`): at most `requests` calls in any
 * `perSeconds` seconds. Absent on a workflow stored before it existed: the kind's default.
 */
export interface TargetRateLimit {
  requests: number;
  perSeconds: number;
}

export interface JiraTarget {
  kind: 'jira';
  rateLimit?: TargetRateLimit;
  baseUrl: string;
  email: string;
  projectKey: string;
  issueType: string;
  /** Transition names used when a case closes or reopens. */
  transitions: { done: string; reopen: string };
}

export interface GithubTarget {
  kind: 'github';
  rateLimit?: TargetRateLimit;
  owner: string;
  repo: string;
  apiUrl: string;
}

export interface WebhookTarget {
  kind: 'webhook';
  rateLimit?: TargetRateLimit;
  url: string;
}

export type WorkflowTarget = JiraTarget | GithubTarget | WebhookTarget;

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

/** Case statuses whose external issue should be closed. */
export const CLOSED_STATUSES: ReadonlySet<string> = new Set(['resolved', 'risk_accepted', 'false_positive']);

/** The case as a delivery sees it: what templates, ADF and webhook payloads are built from. */
export interface DeliveryCase {
  id: string;
  title: string;
  severity: string;
  priority: string | null;
  recommendedAction: string | null;
  reasoning: string | null;
  status: string;
  scanner: string;
  ruleId: string | null;
  cveIds: string[];
  cvssScore: number | null;
  epss: number | null;
  kev: boolean;
  asset: string | null;
  host: string | null;
  component: string | null;
  environment: string | null;
  firstSeen: Date;
  lastSeen: Date;
  /** Where the case is shown (the API URL of the case). */
  url: string;
}
