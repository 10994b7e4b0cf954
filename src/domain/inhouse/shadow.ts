import { parseGateThresholds } from './gate.js';
import type { GateRecord } from './gate.js';

/**
 * Whether the in-house model may answer customers (docs/triage.md#in-house-model). Until then it runs in
 * shadow: its answers are stored for comparison and never returned.
 */
export type InhouseMode = 'shadow' | 'serving';

export interface InhouseModeInput {
  /** The latest gate record for `modelVersion` (see `GateRecordStore.latestFor`), or none. */
  gateRecord: GateRecord | null | undefined;
  /** Version of the model that would answer (`InhouseModel.version`). */
  modelVersion: string;
  /** The operator's switch (`INHOUSE_ENABLED`). */
  operatorEnabled: boolean;
}

/**
 * Serving only when all hold: the operator enabled it, a gate record exists for this
 * exact version, and that record passed with zero KEV-floor violations. Anything else,
 * including a record for another version, is shadow. The KEV count is checked again
 * rather than trusting `passed` alone, because the record may come from a file. A pass judged
 * by thresholds this release no longer accepts (an earlier, more lenient gate) does not count:
 * the version must pass the gate as it is now.
 */
export function explainInhouseMode(input: InhouseModeInput): { mode: InhouseMode; reason: string } {
  const { gateRecord, modelVersion, operatorEnabled } = input;
  if (!operatorEnabled) return { mode: 'shadow', reason: 'operator has not enabled the in-house model' };
  if (!gateRecord) return { mode: 'shadow', reason: `no gate record for ${modelVersion}` };
  if (gateRecord.modelVersion !== modelVersion) {
    return { mode: 'shadow', reason: `gate record is for ${gateRecord.modelVersion}, not ${modelVersion}` };
  }
  if (gateRecord.passed !== true || gateRecord.metrics?.kevFloorViolations !== 0) {
    return { mode: 'shadow', reason: `gate failed for ${modelVersion} at ${gateRecord.evaluatedAt}` };
  }
  if (!judgedByCurrentGate(gateRecord)) {
    return {
      mode: 'shadow',
      reason: `gate passed for ${modelVersion} at ${gateRecord.evaluatedAt} by thresholds of an earlier release; run npm run gate again`,
    };
  }
  return { mode: 'serving', reason: `gate passed for ${modelVersion} at ${gateRecord.evaluatedAt}` };
}

export function inhouseMode(input: InhouseModeInput): InhouseMode {
  return explainInhouseMode(input).mode;
}

function judgedByCurrentGate(record: GateRecord): boolean {
  try {
    parseGateThresholds(record.thresholds);
    return true;
  } catch {
    return false;
  }
}
