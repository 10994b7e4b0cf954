/**
 * The shape and defaults of a workspace's SLA policy (docs/cases.md#due-dates-and-sla); stored by
 * `sla-policy-store.ts`. Its own list of the five priorities (a triage's and a severity's values)
 * keeps it free of the triage store, which recomputes due dates.
 */
export const SLA_PRIORITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] as const;
export type SlaPriority = (typeof SLA_PRIORITIES)[number];

/** Days by priority; null: no due date from the policy (a KEV due date may still give one). */
export type SlaDays = Record<SlaPriority, number | null>;

export interface SlaPolicy {
  /** Days from a case's first sighting to its due date, by priority (severity while untriaged). */
  days: SlaDays;
  /**
   * Days for cases whose asset (as their newest scan described it) is internet-exposed or of HIGH
   * or CRITICAL criticality; the sooner of these and `days` applies. Null: no tighter days.
   */
  exposedDays: SlaDays;
  /** The longest a risk acceptance may last, in days. @defaultValue 365 */
  maxAcceptanceDays: number;
  /** When the workspace last set it; null while it has the defaults. */
  updatedAt: string | null;
}

/** What `PUT /api/v1/sla-policy` stores: a whole policy (omitted days are null). */
export type SlaPolicyInput = Omit<SlaPolicy, 'updatedAt'>;

export const DEFAULT_SLA_POLICY: SlaPolicy = Object.freeze({
  days: Object.freeze({ CRITICAL: 7, HIGH: 30, MEDIUM: 90, LOW: 180, INFO: null }),
  exposedDays: Object.freeze({ CRITICAL: null, HIGH: null, MEDIUM: null, LOW: null, INFO: null }),
  maxAcceptanceDays: 365,
  updatedAt: null,
});

/** The bounds of every day count of a policy (m025's CHECKs). */
export const SLA_DAYS_MAX = 3650;
