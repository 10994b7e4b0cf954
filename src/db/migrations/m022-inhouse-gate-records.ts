import { Migration } from '@mikro-orm/migrations';

/**
 * The in-house model's gate records (docs/triage.md#gate-records), one row per evaluation:
 * every web and worker process reads the same record when it decides at start whether the model
 * serves. History is kept; the latest evaluation of a model version decides. The unique key
 * makes recording one evaluation twice (an import run again) a no-op.
 */
export class M022InhouseGateRecords extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE inhouse_gate_records (
        id bigserial PRIMARY KEY,
        model_version text NOT NULL,
        gate_config_version text NOT NULL,
        dataset_sha256 text NOT NULL,
        dataset_name text NOT NULL,
        thresholds jsonb NOT NULL,
        metrics jsonb NOT NULL,
        passed boolean NOT NULL,
        failures jsonb NOT NULL,
        evaluated_at timestamptz NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT inhouse_gate_records_run_key UNIQUE (model_version, evaluated_at, dataset_sha256)
      )`);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE IF EXISTS inhouse_gate_records');
  }
}
