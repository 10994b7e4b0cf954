import { EntitySchema } from '@mikro-orm/core';

/**
 * One evaluation of the in-house model by its benchmark gate (docs/triage.md#in-house-model),
 * as table `inhouse_gate_records` of migration m022 describes it. The store reads and writes
 * it with SQL (`domain/inhouse/pg-gate-record-store.ts`); this schema exists so the schema
 * equality test covers the table.
 */
export interface InhouseGateRecordRow {
  id?: string;
  modelVersion: string;
  /** `sha256:` + hash of the canonical JSON of the thresholds the run applied. */
  gateConfigVersion: string;
  datasetSha256: string;
  datasetName: string;
  thresholds: Record<string, unknown>;
  metrics: Record<string, unknown>;
  passed: boolean;
  failures: string[];
  evaluatedAt: Date;
  recordedAt: Date;
}

const text = { type: 'text' } as const;
const json = { type: 'json' } as const;
const timestamp = { type: 'Date', columnType: 'timestamptz' } as const;

export const InhouseGateRecordSchema = new EntitySchema<InhouseGateRecordRow>({
  name: 'InhouseGateRecord',
  tableName: 'inhouse_gate_records',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true },
    modelVersion: text,
    gateConfigVersion: text,
    datasetSha256: text,
    datasetName: text,
    thresholds: json,
    metrics: json,
    passed: { type: 'boolean' },
    failures: json,
    evaluatedAt: timestamp,
    recordedAt: { ...timestamp, defaultRaw: 'now()', onCreate: () => new Date() },
  },
  uniques: [
    {
      name: 'inhouse_gate_records_run_key',
      properties: ['modelVersion', 'evaluatedAt', 'datasetSha256'],
    },
  ],
});
