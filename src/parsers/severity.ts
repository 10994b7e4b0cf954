import type { Severity } from './types.js';

/** Nessus and Qualys use integer levels; Nessus 0..4, Qualys 1..5 (mapped by the caller). */
const NESSUS_LEVELS: readonly Severity[] = ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL'];

/** Nessus `severity` attribute: 0 INFO, 1 LOW, 2 MEDIUM, 3 HIGH, 4 CRITICAL (docs/ingestion.md#formats). */
export function severityFromNessus(level: string | undefined): Severity {
  const n = Number.parseInt(level ?? '', 10);
  return NESSUS_LEVELS[n] ?? 'INFO';
}

/**
 * Qualys severity 1..5 ("minimal" to "urgent"). Five levels onto five bands: 1 INFO, 2 LOW,
 * 3 MEDIUM, 4 HIGH, 5 CRITICAL. Information-gathered (INFOS) records are INFO whatever their level,
 * which the caller decides.
 */
export function severityFromQualys(level: string | undefined): Severity {
  const n = Number.parseInt(level ?? '', 10);
  if (n >= 5) return 'CRITICAL';
  if (n === 4) return 'HIGH';
  if (n === 3) return 'MEDIUM';
  if (n === 2) return 'LOW';
  return 'INFO';
}

/**
 * CVSS base score to band, per CVSS v3 qualitative ratings; 0 (and negative OpenVAS log/error
 * levels) is INFO.
 */
export function severityFromCvss(score: number | null): Severity {
  if (score === null || !Number.isFinite(score) || score <= 0) return 'INFO';
  if (score >= 9) return 'CRITICAL';
  if (score >= 7) return 'HIGH';
  if (score >= 4) return 'MEDIUM';
  return 'LOW';
}

/** SARIF `security-severity` (a numeric string) per docs/ingestion.md#formats: no INFO band for a scored result. */
export function severityFromSecuritySeverity(score: number): Severity {
  if (score >= 9) return 'CRITICAL';
  if (score >= 7) return 'HIGH';
  if (score >= 4) return 'MEDIUM';
  return 'LOW';
}

/** SARIF `level` when no score: error HIGH, warning MEDIUM, note LOW; `none` INFO. Default level is warning. */
export function severityFromSarifLevel(level: string | undefined): Severity {
  switch (level) {
    case 'error':
      return 'HIGH';
    case 'note':
      return 'LOW';
    case 'none':
      return 'INFO';
    default:
      return 'MEDIUM';
  }
}

/** Free-text severity (CycloneDX ratings, CLI findings). Unknown words fall back to `fallback`. */
export function severityFromText(text: string | null | undefined, fallback: Severity = 'INFO'): Severity {
  switch ((text ?? '').trim().toLowerCase()) {
    case 'critical':
      return 'CRITICAL';
    case 'high':
    case 'error':
      return 'HIGH';
    case 'medium':
    case 'moderate':
    case 'warning':
      return 'MEDIUM';
    case 'low':
    case 'note':
      return 'LOW';
    case 'info':
    case 'informational':
    case 'none':
      return 'INFO';
    default:
      return fallback;
  }
}

/** Parses a float, returning null for empty or non-numeric input. */
export function parseScore(text: string | null | undefined): number | null {
  if (text === null || text === undefined || text.trim() === '') return null;
  const n = Number.parseFloat(text);
  return Number.isFinite(n) ? n : null;
}

/** Order used to pick the worst of several ratings. */
export const SEVERITY_RANK: Readonly<Record<Severity, number>> = {
  INFO: 0,
  LOW: 1,
  MEDIUM: 2,
  HIGH: 3,
  CRITICAL: 4,
};
