import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import type { KeyVerifier } from '../domain/keys/key-verifier.js';
import type { KeyService } from '../domain/keys/key-service.js';
import type { WorkspaceService } from '../domain/workspaces/workspace-service.js';
import type { SessionStore } from '../domain/workspaces/sessions.js';
import type { SsoService } from '../domain/workspaces/sso/sso-service.js';
import type { RequestMeter } from '../domain/usage/request-meter.js';
import type { RateLimiter } from '../domain/usage/rate-limiter.js';
import type { QuotaService } from '../domain/usage/quota.js';
import type { TriageService } from '../domain/triage/triage-service.js';
import type { CaseTriageService } from '../domain/triage/case-triage.js';
import type { CaseSelectionService } from '../domain/cases/case-selection.js';
import type { QueueKit } from '../jobs/queue-kit.js';
import type { CaseService } from '../domain/cases/case-service.js';
import type { SlaPolicyService } from '../domain/cases/sla-policy-service.js';
import type { UsageReports } from '../domain/usage/usage-report.js';
import type { AuditLog } from '../domain/keys/audit-log.js';
import type { EnrichmentLookup } from '../domain/enrichment/index.js';
import type { WorkspaceSummaries } from '../domain/workspaces/workspace-summary.js';
import type { ScanRouteDeps } from './routes/scans.js';
import type { ExportService } from '../domain/exports/export-service.js';
import type { HttpMetrics } from './plugins/metrics.js';
import type { WorkflowService } from '../domain/workflows/workflow-service.js';
import type { InboundDeps } from '../domain/workflows/inbound.js';
import type { WorkflowTrigger } from '../domain/workflows/trigger.js';
import type { WorkspaceDeletions } from '../domain/workspaces/workspace-deletion.js';
import type { RetentionSettings } from '../domain/workspaces/retention.js';
import type { WorkspaceArchive } from '../domain/workspaces/workspace-archive.js';
import type { MemberService } from '../domain/workspaces/members.js';
import type { InvitationService } from '../domain/workspaces/invitations.js';
import type { PasswordResetService } from '../domain/workspaces/password-reset.js';

/**
 * What the HTTP edge may use, declared here so `api/` imports nothing above it: `app/services.ts`
 * builds a `Services` that extends this, and each route group takes a `Pick` of the few members
 * it uses. Routes never see the database pool: each area's reads and writes come as a service
 * bound to it once (`cases`, `scans`, `usageReports`, `audit`, `enrichment`, ...).
 */
export interface AppDeps {
  config: Config;
  logger: Logger;
  clock: () => Date;
  verifier: KeyVerifier;
  keys: KeyService;
  workspaces: WorkspaceService;
  sessions: SessionStore;
  /** Single sign-on: per-workspace OpenID Connect settings and sign-ins. */
  sso: SsoService;
  /** A workspace's members: list, roles, removal, ownership, and a person's workspaces. */
  members: MemberService;
  /** Invitations to a workspace: create, list, revoke, describe, accept. */
  invitations: InvitationService;
  /** Password reset links: asked for, issued by the operator, used. */
  passwordResets: PasswordResetService;
  meter: RequestMeter;
  rateLimiter: RateLimiter;
  quota: QuotaService;
  triage: TriageService;
  /** Case triage: a scan's cases after upload, a selection as a batch, one case at once. */
  caseTriage: CaseTriageService;
  /** Case selections of the console's triage preview (the same query case triage selects with). */
  caseSelection: CaseSelectionService;
  queues: QueueKit;
  /** Cases and findings: lists, one case with its detail, evidence, histories, status changes, counts. */
  cases: CaseService;
  /** The workspace SLA policy (due dates), read and replaced. */
  slaPolicy: SlaPolicyService;
  /** The monthly statement, daily usage series and per-key totals. */
  usageReports: UsageReports;
  /** The workspace's audit log read back. */
  audit: AuditLog;
  /** KEV, EPSS and NVD enrichment of CVE ids (the console's case page). */
  enrichment: EnrichmentLookup;
  /** Whether a KEV catalog is loaded: the case page says "Not listed" only then, else "Unknown". */
  kevCatalogLoaded: () => Promise<boolean>;
  /** The console's workspace card. */
  workspaceSummary: WorkspaceSummaries;
  /** Scans read and uploaded (the service), their storage and the `scan-ingest` queue. */
  scans: ScanRouteDeps;
  /** A workspace's end of life: the owner's request and its status resource. */
  workspaceDeletions: WorkspaceDeletions;
  /** How long the workspace keeps raw scan files. */
  retention: RetentionSettings;
  /** The workspace's records as one archive, built for an owner. */
  workspaceArchive: { build(session: { workspaceId: string; userId: string }): Promise<WorkspaceArchive> };
  /** Case and finding exports, their jobs and signed download links. */
  exports: ExportService;
  /** Mapped workflows: their management, and the inbound Jira/GitHub webhooks. */
  workflows: { service: WorkflowService; inbound: InboundDeps; trigger: WorkflowTrigger };
  /** Server secret (KEY_PEPPER), for sealing secrets kept at rest. */
  pepper: string;
  /** Request metrics and `GET /metrics`; absent: neither. */
  metrics?: HttpMetrics;
  /** Throws when the database or the queue cannot be reached. */
  readiness(): Promise<void>;
}
