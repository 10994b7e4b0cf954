import { paginate, unwrap } from '@vuln-triage/sdk';
import type { ApiClient } from './http-client.js';

/** Thresholds of `--fail-on` and `--fail-on-priority`, riskiest first. */
export const THRESHOLDS = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'] as const;
export type Threshold = (typeof THRESHOLDS)[number];

/** What a threshold is measured on: the scanner's severity, or the triage's priority (docs/cases.md#lists-and-filters). */
export type ThresholdField = 'severity' | 'priority';

/** `HIGH` → `CRITICAL,HIGH`: the levels at or above a threshold. */
export function atOrAbove(threshold: Threshold): string[] {
  return THRESHOLDS.slice(0, THRESHOLDS.indexOf(threshold) + 1);
}

/**
 * Cases that meet `--fail-on` (severity) or `--fail-on-priority` (the current triage's priority:
 * an untriaged case has none and never counts) for a completed scan, from
 * `GET /api/v1/cases?scan=…`: the cases the scan sighted at or above the threshold that are
 * still actionable (`open` or `in_progress`: a case marked `risk_accepted` or `false_positive`
 * never fails a build), and of those, unless `all`, only the ones the scan created
 * (`firstScanId` is the scan: what the scan's `counts.new` counts).
 */
export async function countFailing(
  client: ApiClient,
  scanId: string,
  gate: { field: ThresholdField; threshold: Threshold },
  all: boolean,
): Promise<number> {
  let count = 0;
  const cases = paginate(async (cursor) =>
    unwrap(
      await client.sdk.GET('/api/v1/cases', {
        params: {
          query: {
            scan: scanId,
            [gate.field]: atOrAbove(gate.threshold).join(','),
            status: 'open,in_progress',
            limit: 200,
            cursor,
          },
        },
      }),
    ),
  );
  for await (const c of cases) if (all || c.firstScanId === scanId) count++;
  return count;
}
