import type { CaseRisk } from '../cases/case-candidates.js';
import { SEVERITIES } from '../triage-engine/types.js';

/**
 * Which cases a case triage spends the month's last AI calls on: never beyond the
 * remaining AI calls, riskiest first. Riskiest first means, in order: a CVE in the
 * KEV catalog, then the highest EPSS score, then the highest CVSS base score, then the severity;
 * ties go to the case first seen earliest, then to the lower id, so the choice is the same on
 * every run. The facts it ranks on are read by `domain/cases/case-candidates.ts`.
 */

const severityRank = (s: string): number => {
  const i = (SEVERITIES as readonly string[]).indexOf(s);
  return i === -1 ? SEVERITIES.length : i;
};

/** Negative when `a` is riskier than `b` (sorts riskiest first). */
export function compareCaseRisk(a: CaseRisk, b: CaseRisk): number {
  if (a.kev !== b.kev) return a.kev ? -1 : 1;
  const epss = (b.epss ?? -1) - (a.epss ?? -1);
  if (epss !== 0) return epss;
  const cvss = (b.cvss ?? -1) - (a.cvss ?? -1);
  if (cvss !== 0) return cvss;
  const sev = severityRank(a.severity) - severityRank(b.severity);
  if (sev !== 0) return sev;
  const seen = a.firstSeen.getTime() - b.firstSeen.getTime();
  if (seen !== 0) return seen;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Splits cases into the `room` riskiest (to triage, riskiest first) and the rest (skipped for
 * quota). `room` below zero counts as zero.
 */
export function riskiestFirst<T extends CaseRisk>(
  cases: readonly T[],
  room: number,
): { triage: T[]; skipped: T[] } {
  const sorted = [...cases].sort(compareCaseRisk);
  const n = Math.max(0, Math.min(room, sorted.length));
  return { triage: sorted.slice(0, n), skipped: sorted.slice(n) };
}
