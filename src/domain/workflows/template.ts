import type { FieldError } from '../../lib/errors.js';
import type { DeliveryCase, WorkflowFields } from './types.js';

/**
 * The field-mapping template language (docs/workflows.md#fields): text with `{{case.<field>}}` placeholders over
 * a fixed set of case fields. Nothing else is interpreted — no expressions, filters or code — so
 * a template can never run anything or reach a value outside this table. Unknown placeholders
 * are refused when the workflow is saved, never at delivery time.
 */
const FIELD_LIST: Record<string, (c: DeliveryCase) => string> = {
  id: (c) => c.id,
  title: (c) => c.title,
  severity: (c) => c.severity,
  priority: (c) => c.priority ?? c.severity,
  action: (c) => c.recommendedAction ?? '',
  status: (c) => c.status,
  scanner: (c) => c.scanner,
  rule: (c) => c.ruleId ?? '',
  cve: (c) => c.cveIds[0] ?? '',
  cves: (c) => c.cveIds.join(', '),
  cvss: (c) => (c.cvssScore === null ? '' : String(c.cvssScore)),
  epss: (c) => (c.epss === null ? '' : c.epss.toFixed(3)),
  kev: (c) => (c.kev ? 'KEV' : ''),
  asset: (c) => c.asset ?? c.host ?? c.component ?? '',
  host: (c) => c.host ?? '',
  component: (c) => c.component ?? '',
  environment: (c) => c.environment ?? '',
  assignee: (c) => c.assignee ?? '',
  tags: (c) => c.tags.join(', '),
  url: (c) => c.url,
};
/** Without a prototype, so no inherited name (`constructor`, `__proto__`) is ever a field. */
const FIELDS: Record<string, (c: DeliveryCase) => string> = Object.assign(
  Object.create(null) as object,
  FIELD_LIST,
);

/** The field named by `placeholder` (`case.title`), never an inherited property (`case.__proto__`). */
function fieldOf(placeholder: string): ((c: DeliveryCase) => string) | undefined {
  if (!placeholder.startsWith('case.')) return undefined;
  const name = placeholder.slice(5);
  return Object.hasOwn(FIELDS, name) ? FIELDS[name] : undefined;
}

export const TEMPLATE_FIELDS = Object.keys(FIELDS);

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** Problems of one template, as field errors under `path`. */
export function templateErrors(template: string, path: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const m of template.matchAll(PLACEHOLDER)) {
    const name = m[1]!;
    if (!fieldOf(name)) {
      errors.push({
        path,
        message: `unknown placeholder {{${name}}}; use one of ${TEMPLATE_FIELDS.map((f) => `{{case.${f}}}`).join(', ')}`,
      });
    }
  }
  return errors;
}

/** `template` with every placeholder replaced by the case's value (unknown ones by nothing). */
export function renderTemplate(template: string, c: DeliveryCase): string {
  return template.replace(PLACEHOLDER, (_all, name: string) => {
    const field = fieldOf(name);
    return field ? field(c) : '';
  });
}

/** Cut to `max` characters (an ellipsis marks the cut), on a code point boundary. */
export function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/** What the target's limits allow: the fixed text of a template alone must fit. */
export function mappingErrors(fields: WorkflowFields, limits: { summary: number }): FieldError[] {
  const errors: FieldError[] = [];
  if (fields.summary !== undefined) {
    errors.push(...templateErrors(fields.summary, '/fields/summary'));
    const fixed = fields.summary.replace(PLACEHOLDER, '');
    if ([...fixed].length > limits.summary)
      errors.push({
        path: '/fields/summary',
        message: `the summary's fixed text is longer than the target allows (${limits.summary} characters)`,
      });
  }
  (fields.labels ?? []).forEach((l, i) => {
    errors.push(...templateErrors(l, `/fields/labels/${i}`));
  });
  return errors;
}

export const DEFAULT_SUMMARY = '{{case.title}} on {{case.asset}}';

/** The rendered summary (or title), within the target's limit. */
export function renderSummary(fields: WorkflowFields, c: DeliveryCase, max: number): string {
  const text = renderTemplate(fields.summary ?? DEFAULT_SUMMARY, c)
    .replace(/\s+/g, ' ')
    .trim();
  return truncate(text || c.title, max);
}

/** Rendered labels, plus the mapped priority label when `priorityAsLabel`; empty ones dropped. */
export function renderLabels(fields: WorkflowFields, c: DeliveryCase, priorityAsLabel: boolean): string[] {
  const labels = (fields.labels ?? []).map((l) => renderTemplate(l, c).trim()).filter(Boolean);
  if (priorityAsLabel) {
    const mapped = mappedPriority(fields, c);
    if (mapped) labels.push(mapped);
  }
  return [...new Set(labels)];
}

/** The target's priority for the case's priority (its severity while untriaged), if mapped. */
export function mappedPriority(fields: WorkflowFields, c: DeliveryCase): string | undefined {
  return fields.priority?.[c.priority ?? c.severity];
}
