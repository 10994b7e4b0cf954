import { SLA_STATES } from '../../domain/cases/case-due-dates.js';
import { EXPORT_FORMATS } from '../../domain/exports/formats.js';
import { FINDING_EXPORT_FORMATS } from '../../domain/exports/findings-export.js';
import { CASE_STATUSES } from '../../domain/cases/case-status.js';
import { PRIORITIES, RECOMMENDED_ACTIONS, SEVERITIES } from '../../domain/triage-engine/types.js';
import { listFilterProperties } from './scans.js';

/** Request schemas of the export routes (docs/exports.md): the list filters of cases and findings, plus a format. */

export const exportCasesQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['format'],
  properties: { format: { type: 'string', enum: [...EXPORT_FORMATS] }, ...listFilterProperties },
} as const;

export const exportFindingsQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['format'],
  properties: {
    format: { type: 'string', enum: [...FINDING_EXPORT_FORMATS] },
    ...listFilterProperties,
    case: { type: 'string', maxLength: 100 },
  },
} as const;

/**
 * The list filters in a JSON body (an export job's `filter`, case triage by filter): lists are
 * arrays, not comma-separated text.
 */
export const listFilterBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    severity: {
      type: 'array',
      items: { type: 'string', enum: [...SEVERITIES] },
      uniqueItems: true,
      maxItems: 5,
    },
    status: {
      type: 'array',
      items: { type: 'string', enum: [...CASE_STATUSES] },
      uniqueItems: true,
      maxItems: 5,
    },
    priority: {
      type: 'array',
      items: { type: 'string', enum: [...PRIORITIES] },
      uniqueItems: true,
      maxItems: 5,
    },
    action: {
      type: 'array',
      items: { type: 'string', enum: [...RECOMMENDED_ACTIONS] },
      uniqueItems: true,
      maxItems: 6,
    },
    triaged: { type: 'boolean' },
    stale: { type: 'boolean' },
    cve: listFilterProperties.cve,
    asset: listFilterProperties.asset,
    scan: listFilterProperties.scan,
    scanner: listFilterProperties.scanner,
    epssMin: listFilterProperties.epssMin,
    duplicates: listFilterProperties.duplicates,
    kev: { type: 'boolean' },
    sla: {
      type: 'array',
      items: { type: 'string', enum: [...SLA_STATES] },
      uniqueItems: true,
      maxItems: 5,
    },
    dueBefore: listFilterProperties.dueBefore,
    assignee: listFilterProperties.assignee,
    unassigned: listFilterProperties.unassigned,
    tag: listFilterProperties.tag,
  },
} as const;

export const createExportBody = {
  type: 'object',
  additionalProperties: false,
  required: ['format'],
  properties: {
    format: { type: 'string', enum: [...EXPORT_FORMATS] },
    subject: { type: 'string', enum: ['cases', 'findings'] },
    filter: listFilterBody,
  },
} as const;

export const downloadQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['expires', 'sig'],
  properties: { expires: { type: 'string', maxLength: 20 }, sig: { type: 'string', maxLength: 100 } },
} as const;
