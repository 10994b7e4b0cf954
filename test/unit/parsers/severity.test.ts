import { describe, expect, it } from 'vitest';
import {
  severityFromCvss,
  severityFromNessus,
  severityFromQualys,
  severityFromSarifLevel,
  severityFromSecuritySeverity,
  severityFromText,
} from '../../../src/parsers/severity.js';

describe('severity mappings (docs/ingestion.md#formats)', () => {
  it.each([
    ['0', 'INFO'],
    ['1', 'LOW'],
    ['2', 'MEDIUM'],
    ['3', 'HIGH'],
    ['4', 'CRITICAL'],
    ['', 'INFO'],
    [undefined, 'INFO'],
    ['7', 'INFO'],
  ])('Nessus severity %s → %s', (level, expected) => {
    expect(severityFromNessus(level)).toBe(expected);
  });

  it.each([
    ['1', 'INFO'],
    ['2', 'LOW'],
    ['3', 'MEDIUM'],
    ['4', 'HIGH'],
    ['5', 'CRITICAL'],
    [undefined, 'INFO'],
  ])('Qualys severity %s → %s', (level, expected) => {
    expect(severityFromQualys(level)).toBe(expected);
  });

  it.each([
    [null, 'INFO'],
    [-1, 'INFO'],
    [0, 'INFO'],
    [0.1, 'LOW'],
    [3.9, 'LOW'],
    [4, 'MEDIUM'],
    [6.9, 'MEDIUM'],
    [7, 'HIGH'],
    [8.9, 'HIGH'],
    [9, 'CRITICAL'],
    [10, 'CRITICAL'],
  ])('CVSS %s → %s (OpenVAS severity, CycloneDX scores)', (score, expected) => {
    expect(severityFromCvss(score)).toBe(expected);
  });

  it.each([
    [0, 'LOW'],
    [3.9, 'LOW'],
    [4, 'MEDIUM'],
    [7, 'HIGH'],
    [8.9, 'HIGH'],
    [9, 'CRITICAL'],
  ])('SARIF security-severity %s → %s', (score, expected) => {
    expect(severityFromSecuritySeverity(score)).toBe(expected);
  });

  it.each([
    ['error', 'HIGH'],
    ['warning', 'MEDIUM'],
    ['note', 'LOW'],
    ['none', 'INFO'],
    [undefined, 'MEDIUM'],
  ])('SARIF level %s → %s', (level, expected) => {
    expect(severityFromSarifLevel(level)).toBe(expected);
  });

  it.each([
    ['Critical', 'CRITICAL'],
    ['HIGH', 'HIGH'],
    ['moderate', 'MEDIUM'],
    ['low', 'LOW'],
    ['informational', 'INFO'],
    ['unknown', 'INFO'],
    [null, 'INFO'],
  ])('text severity %s → %s', (text, expected) => {
    expect(severityFromText(text)).toBe(expected);
  });
});
