/**
 * Mapped workflows (docs/workflows.md).
 *
 * Glossary:
 * - **workflow**: a workspace's rule (which cases), target (where they go) and field mapping (how).
 * - **target**: a Jira Cloud project, a GitHub repository, a generic webhook URL or a Slack incoming
 *   webhook; one folder per kind under `targets/`, listed in `targets/registry.ts`.
 * - **link**: the one external issue of a case in a workflow (`workflow_links`); created before
 *   the first remote call with a *marker* the remote issue carries, so a retry can find it.
 * - **delivery**: one event for one case sent through one workflow (`workflow_deliveries`), a
 *   BullMQ job on the `deliveries` queue with retries over at least 24 hours.
 * - **credential**: the Jira API token, GitHub token or Slack webhook URL; **secret**: the `whsec_` signing secret
 *   (outbound webhook signatures, inbound Jira/GitHub webhook verification). Both sealed at rest.
 */
export const WORKFLOW_EVENTS = [
  'case.created',
  'case.updated',
  'case.triaged',
  'case.status_changed',
  /** Once per breach: an open case passed its due date (docs/cases.md#due-dates-and-sla). */
  'case.sla_breached',
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
  /** Owned by this email (docs/cases.md#owner-and-tags). */
  assignee?: string;
  /** `true`: owned by nobody; `false`: owned by someone. */
  unassigned?: boolean;
  /** Carries this tag. */
  tag?: string;
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
  /** The case's page in the console. */
  consoleUrl: string;
  /** The earliest CISA KEV due date of the case's CVEs (`YYYY-MM-DD`), when one is listed. */
  kevDueDate: string | null;
  /** Its due date under the workspace SLA policy (docs/cases.md#due-dates-and-sla), or null. */
  dueAt: Date | null;
  /** Who owns the case (an email), null when nobody does. */
  assignee: string | null;
  tags: string[];
}
