import { SLA_DAYS_MAX, SLA_PRIORITIES } from '../../domain/cases/sla-policy.js';

/** Request and response schemas of `GET/PUT /api/v1/sla-policy` (docs/cases.md#due-dates-and-sla). */

const days = { type: ['integer', 'null'], minimum: 1, maximum: SLA_DAYS_MAX } as const;
const dayProperties = Object.fromEntries(SLA_PRIORITIES.map((p) => [p, days])) as Record<
  (typeof SLA_PRIORITIES)[number],
  typeof days
>;

/** A whole policy: `days` names all five priorities; omitted `exposedDays` are none, an omitted maximum 365. */
export const slaPolicyBody = {
  type: 'object',
  additionalProperties: false,
  required: ['days'],
  properties: {
    days: {
      type: 'object',
      additionalProperties: false,
      description: 'Days from first sighting to due date by priority (severity while untriaged); null: none.',
      required: ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'],
      properties: dayProperties,
    },
    exposedDays: {
      type: 'object',
      additionalProperties: false,
      description:
        'Tighter days for internet-exposed or HIGH/CRITICAL-criticality assets; omitted or null: none.',
      properties: dayProperties,
    },
    maxAcceptanceDays: { type: 'integer', minimum: 1, maximum: SLA_DAYS_MAX },
  },
} as const;

const daysView = { type: 'object', required: [...SLA_PRIORITIES], properties: dayProperties } as const;

export const slaPolicyView = {
  description: "The workspace's SLA policy.",
  type: 'object',
  required: ['object', 'days', 'exposedDays', 'maxAcceptanceDays', 'updatedAt'],
  properties: {
    object: { type: 'string', const: 'sla_policy' },
    days: daysView,
    exposedDays: daysView,
    maxAcceptanceDays: { type: 'integer' },
    updatedAt: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When it was last set; null while the workspace has the defaults.',
    },
  },
} as const;

export const slaPolicyPutView = {
  ...slaPolicyView,
  required: [...slaPolicyView.required, 'recomputed'],
  properties: {
    ...slaPolicyView.properties,
    recomputed: { type: 'integer', description: 'Cases whose due date moved.' },
  },
} as const;
