import type { MigrationObject } from '@mikro-orm/core';
import { M001Foundation } from './m001-foundation.js';
import { M002Enrichment } from './m002-enrichment.js';
import { M004Triage } from './m004-triage.js';
import { M003Scans } from './m003-scans.js';
import { M005ScanWritePath } from './m005-scan-write-path.js';
import { M006TriageUnanswered } from './m006-triage-unanswered.js';
import { M007SweepIndexes } from './m007-sweep-indexes.js';
import { M008KeyVersion } from './m008-key-version.js';
import { M009AuditPlanChanges } from './m009-audit-plan-changes.js';
import { M010Exports } from './m010-exports.js';
import { M011CaseTriage } from './m011-case-triage.js';
import { M012CasesWriteScope } from './m012-cases-write-scope.js';
import { M017IngestCascades } from './m017-ingest-cascades.js';
import { M013Workflows } from './m013-workflows.js';
import { M018WorkflowAudit } from './m018-workflow-audit.js';
import { M020EvidenceInFindings } from './m020-evidence-in-findings.js';
import { M019WorkflowCaseLeases } from './m019-workflow-case-leases.js';
import { M021WorkflowSlackTarget } from './m021-workflow-slack-target.js';
import { M022InhouseGateRecords } from './m022-inhouse-gate-records.js';
import { M023CisaSsvc } from './m023-cisa-ssvc.js';
import { M024RescanResolution } from './m024-rescan-resolution.js';
import { M025Sla } from './m025-sla.js';
import { M026CaseOwnerAcceptance } from './m026-case-owner-acceptance.js';
import { M027OneVulnerabilityOneCase } from './m027-one-vulnerability-one-case.js';
import { M028MembersAndRoles } from './m028-members-and-roles.js';
import { M029WorkspaceSso } from './m029-workspace-sso.js';
import { M030WorkspaceEndOfLife } from './m030-workspace-end-of-life.js';
import { M031SlaPolicyAudit } from './m031-sla-policy-audit.js';
import { M033SsoSessionBinding } from './m033-sso-session-binding.js';
import { M035CaseIndexDiet } from './m035-case-index-diet.js';
import { M034DueDatesAtRead } from './m034-due-dates-at-read.js';

/**
 * Every migration, in order. Listed explicitly (not globbed) so the same list runs from
 * TypeScript sources and from `dist/`. Append; never edit one that has shipped.
 */
export const migrationsList: MigrationObject[] = [
  { name: 'm001-foundation', class: M001Foundation },
  { name: 'm002-enrichment', class: M002Enrichment },
  { name: 'm004-triage', class: M004Triage },
  { name: 'm003-scans', class: M003Scans },
  { name: 'm005-scan-write-path', class: M005ScanWritePath },
  { name: 'm006-triage-unanswered', class: M006TriageUnanswered },
  { name: 'm007-sweep-indexes', class: M007SweepIndexes },
  { name: 'm008-key-version', class: M008KeyVersion },
  { name: 'm009-audit-plan-changes', class: M009AuditPlanChanges },
  { name: 'm010-exports', class: M010Exports },
  { name: 'm011-case-triage', class: M011CaseTriage },
  { name: 'm012-cases-write-scope', class: M012CasesWriteScope },
  { name: 'm017-ingest-cascades', class: M017IngestCascades },
  { name: 'm013-workflows', class: M013Workflows },
  { name: 'm018-workflow-audit', class: M018WorkflowAudit },
  { name: 'm020-evidence-in-findings', class: M020EvidenceInFindings },
  { name: 'm019-workflow-case-leases', class: M019WorkflowCaseLeases },
  { name: 'm021-workflow-slack-target', class: M021WorkflowSlackTarget },
  { name: 'm022-inhouse-gate-records', class: M022InhouseGateRecords },
  { name: 'm023-cisa-ssvc', class: M023CisaSsvc },
  { name: 'm024-rescan-resolution', class: M024RescanResolution },
  { name: 'm025-sla', class: M025Sla },
  { name: 'm026-case-owner-acceptance', class: M026CaseOwnerAcceptance },
  { name: 'm027-one-vulnerability-one-case', class: M027OneVulnerabilityOneCase },
  { name: 'm028-members-and-roles', class: M028MembersAndRoles },
  { name: 'm029-workspace-sso', class: M029WorkspaceSso },
  { name: 'm030-workspace-end-of-life', class: M030WorkspaceEndOfLife },
  { name: 'm031-sla-policy-audit', class: M031SlaPolicyAudit },
  { name: 'm033-sso-session-binding', class: M033SsoSessionBinding },
  { name: 'm035-case-index-diet', class: M035CaseIndexDiet },
  { name: 'm034-due-dates-at-read', class: M034DueDatesAtRead },
];
