import type { ApiClient } from './http-client.js';

/** Thresholds of `--fail-on`, riskiest first. */
export const THRESHOLDS = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'] as const;
export type Threshold = (typeof THRESHOLDS)[number];

/** `HIGH` → `CRITICAL,HIGH`: the severities at or above a threshold. */
export function atOrAbove(threshold: Threshold): string[] {
  return THRESHOLDS.slice(0, THRESHOLDS.indexOf(threshold) + 1);
}

interface CaseView {
  id: string;
  severity: string;
  status: string;
  firstScanId: string;
}

/**
 * Cases that meet `--fail-on` for a completed scan, from `GET /api/v1/cases?scan=…`: the cases
 * the scan sighted at or above the threshold that are still actionable (`open` or
 * `in_progress`: a case marked `risk_accepted` or `false_positive` never fails a build), and of
 * those, unless `all`, only the ones the scan created (`firstScanId` is the scan: what the scan's
 * `counts.new` counts).
 */
export async function countFailing(
  client: ApiClient,
  scanId: string,
  threshold: Threshold,
  all: boolean,
): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await client.json<{ data: CaseView[]; nextCursor: string | null }>('GET', '/api/v1/cases', {
      query: {
        scan: scanId,
        severity: atOrAbove(threshold).join(','),
        status: 'open,in_progress',
        limit: 200,
        cursor,
      },
    });
    count += page.data.filter((c) => all || c.firstScanId === scanId).length;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return count;
}
