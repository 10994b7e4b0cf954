import { randomUUID } from 'node:crypto';
import type pg from 'pg';

/**
 * Seeds `n` cases into a workspace, one finding each, from `generate_series` (one completed SARIF
 * scan owns the findings), then runs ANALYZE. The workspace row must exist.
 */
export async function seedCases(pool: pg.Pool | pg.Client, workspaceId: string, n: number): Promise<void> {
  const scan = randomUUID();
  await pool.query(
    `INSERT INTO scans (id, workspace_id, format, status, bytes, sha256, storage_path) VALUES ($1, $2, 'sarif', 'completed', 0, 'x', 'x')`,
    [scan, workspaceId],
  );
  await pool.query(
    `INSERT INTO findings (scan_id, record_index, workspace_id, fingerprint, scanner, rule_id, title, severity, cve_ids, cwe_ids,
                           cvss_score, cvss_vector, asset, file, line)
     SELECT $1, g, $2, 'fp-' || g, 'sarif:bench', 'rule-' || (g % 500), 'Finding number ' || g || ' with a "quoted", title',
            (ARRAY['CRITICAL','HIGH','MEDIUM','LOW','INFO'])[1 + g % 5], ARRAY['CVE-2024-' || (10000 + g % 3000)], ARRAY['CWE-79'],
            (g % 100) / 10.0, 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 'app-' || (g % 50), 'src/file' || (g % 900) || '.ts', 1 + g % 400
     FROM generate_series(1, $3::int) g`,
    [scan, workspaceId, n],
  );
  await pool.query(
    `INSERT INTO cases (workspace_id, fingerprint, title, severity, scanner, rule_id, cve_ids, cwe_ids, cvss_score, asset,
                        first_scan_id, last_scan_id, first_seen, last_seen, sightings)
     SELECT workspace_id, fingerprint, title, severity, scanner, rule_id, cve_ids, cwe_ids, cvss_score, asset, scan_id, scan_id, now(), now(), 1
     FROM findings WHERE scan_id = $1`,
    [scan],
  );
  await pool.query('ANALYZE');
}
