import type { Context } from './context.js';
import { atOrAbove, type Threshold } from './fail-on.js';
import type { ScanStatus } from './scan-status.js';
import { formatBytes, formatCount, table } from './output.js';

/** One file's outcome, also the `--json` output's element. */
export interface UploadResult {
  file: string;
  scanId: string;
  statusUrl: string;
  scan: ScanStatus | null;
  failOn: Verdict | null;
  /** `--fail-on-priority`: the same count on the cases' triage priority. */
  failOnPriority?: Verdict | null;
  /** `--sarif-out`: where the scan's open cases were written as SARIF. */
  sarif?: string | null;
}

/** A threshold's count: the cases that meet it, new ones only or all the scan sighted. */
export interface Verdict {
  threshold: Threshold;
  scope: 'new' | 'all';
  cases: number;
}

const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'];
const PRIORITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'];

const n = (v: number | null | undefined): string => (v === null || v === undefined ? '-' : formatCount(v));

/**
 * The human summary of `scan upload`: without `--wait`, the scan ids and where to poll them;
 * with it, one row per file (findings, new cases, duplicates, findings by severity, or cases by
 * priority when the server triaged them), a total row for several files, and the `--fail-on` verdict.
 */
export function printScanSummary(ctx: Context, results: UploadResult[], waited: boolean): void {
  const s = ctx.style;
  if (!waited) {
    ctx.print(
      table(
        ['FILE', 'SCAN', 'STATUS URL'],
        results.map((r) => [r.file, r.scanId, r.statusUrl]),
      ),
    );
    return;
  }
  const done = results.filter((r) => r.scan !== null);
  const triaged = done.some((r) => r.scan!.triage?.byPriority);
  const levels = triaged ? PRIORITIES : SEVERITIES;
  const rows = done.map((r) => {
    const scan = r.scan!;
    const counts = triaged ? (scan.triage?.byPriority ?? {}) : scan.counts.bySeverity;
    const status = scan.status === 'completed' ? s.green(scan.status) : s.red(scan.status);
    return [
      r.file,
      status,
      scan.format ?? '-',
      formatBytes(scan.bytes),
      n(scan.counts.findings),
      n(scan.counts.new),
      n(scan.counts.duplicate),
      ...levels.map((l) => n(counts[l] ?? 0)),
    ];
  });
  if (done.length > 1) {
    const sum = (pick: (r: UploadResult) => number | null | undefined) =>
      n(done.reduce((acc, r) => acc + (pick(r) ?? 0), 0));
    rows.push([
      s.bold('total'),
      '',
      '',
      formatBytes(done.reduce((acc, r) => acc + r.scan!.bytes, 0)),
      sum((r) => r.scan!.counts.findings),
      sum((r) => r.scan!.counts.new),
      sum((r) => r.scan!.counts.duplicate),
      ...levels.map((l) =>
        sum((r) => (triaged ? r.scan!.triage?.byPriority?.[l] : r.scan!.counts.bySeverity[l]) ?? 0),
      ),
    ]);
  }
  const right = [3, 4, 5, 6, ...levels.map((_, i) => 7 + i)];
  ctx.print(
    table(
      [
        'FILE',
        'STATUS',
        'FORMAT',
        'SIZE',
        'FINDINGS',
        'NEW CASES',
        'DUPLICATES',
        ...levels.map((l) => s.severity(l)),
      ],
      rows,
      right,
    ),
  );
  ctx.print(
    s.dim(
      triaged ? 'By priority: cases the server triaged.' : 'By severity: findings as the scanner rated them.',
    ),
  );
  for (const r of done) {
    for (const [verdict, flag, field] of [
      [r.failOn, '--fail-on', ''],
      [r.failOnPriority, '--fail-on-priority', ' priority'],
    ] as const) {
      if (!verdict) continue;
      const { threshold, scope, cases } = verdict;
      const what = `${scope === 'new' ? 'new' : 'open'} case${cases === 1 ? '' : 's'} at${field} ${atOrAbove(threshold).join(' or ')}`;
      ctx.print(
        cases > 0
          ? s.red(`${r.file}: ${formatCount(cases)} ${what}: failing (${flag} ${threshold})`)
          : s.green(`${r.file}: no ${what}: passing`),
      );
    }
  }
}
