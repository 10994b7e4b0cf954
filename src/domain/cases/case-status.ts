/**
 * Where a case stands in its workflow (docs/cases.md#statuses); the `cases.status` CHECK constraint
 * (migration m003) lists the same values. A finding's status is its case's.
 */
export const CASE_STATUSES = ['open', 'in_progress', 'resolved', 'risk_accepted', 'false_positive'] as const;
export type CaseStatus = (typeof CASE_STATUSES)[number];
