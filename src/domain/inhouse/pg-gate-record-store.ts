import type { Queryable } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { gateConfigVersion } from './gate.js';
import type { GateMetrics, GateRecord, GateThresholds } from './gate.js';
import type { GateRecordStore } from './gate-record-store.js';

/** The only module that names the `inhouse_gate_records` table. */

interface GateRecordRow {
  model_version: string;
  dataset_sha256: string;
  dataset_name: string;
  thresholds: GateThresholds;
  metrics: GateMetrics;
  passed: boolean;
  failures: string[];
  evaluated_at: Date;
}

const toRecord = (r: GateRecordRow): GateRecord => ({
  modelVersion: r.model_version,
  datasetSha256: r.dataset_sha256,
  datasetName: r.dataset_name,
  thresholds: r.thresholds,
  metrics: r.metrics,
  passed: r.passed,
  failures: r.failures,
  evaluatedAt: r.evaluated_at.toISOString(),
});

/**
 * Gate records in PostgreSQL, one row per evaluation, so every web and worker process on any
 * machine reads the same record (docs/triage.md#gate-records). History is kept; the latest
 * evaluation of a version decides, ordered by `evaluatedAt` (then by insertion, for two runs
 * in the same millisecond), so an imported older record never overrides a newer run.
 */
export class PgGateRecordStore implements GateRecordStore {
  constructor(private readonly db: Queryable) {}

  async append(record: GateRecord): Promise<void> {
    await this.insert(record);
  }

  /**
   * Stores `record` unless the same evaluation (model version, dataset hash, evaluation time)
   * is already there; true when it was new. What makes an import idempotent.
   */
  async insert(record: GateRecord): Promise<boolean> {
    const { rowCount } = await this.db.query(
      sql`INSERT INTO inhouse_gate_records (model_version, gate_config_version, dataset_sha256, dataset_name,
            thresholds, metrics, passed, failures, evaluated_at)
          VALUES (${record.modelVersion}, ${gateConfigVersion(record.thresholds)}, ${record.datasetSha256},
            ${record.datasetName}, ${JSON.stringify(record.thresholds)}, ${JSON.stringify(record.metrics)},
            ${record.passed}, ${JSON.stringify(record.failures)}, ${new Date(record.evaluatedAt)})
          ON CONFLICT ON CONSTRAINT inhouse_gate_records_run_key DO NOTHING`,
    );
    return rowCount === 1;
  }

  async latestFor(modelVersion: string): Promise<GateRecord | null> {
    const { rows } = await this.db.query<GateRecordRow>(
      sql`SELECT model_version, dataset_sha256, dataset_name, thresholds, metrics, passed, failures, evaluated_at
            FROM inhouse_gate_records
           WHERE model_version = ${modelVersion}
           ORDER BY evaluated_at DESC, id DESC
           LIMIT 1`,
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Every record of `modelVersion`, newest first: the history an operator reads. */
  async historyFor(modelVersion: string): Promise<GateRecord[]> {
    const { rows } = await this.db.query<GateRecordRow>(
      sql`SELECT model_version, dataset_sha256, dataset_name, thresholds, metrics, passed, failures, evaluated_at
            FROM inhouse_gate_records
           WHERE model_version = ${modelVersion}
           ORDER BY evaluated_at DESC, id DESC`,
    );
    return rows.map(toRecord);
  }
}
