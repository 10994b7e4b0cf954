import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';

/** The workspace's scan file retention in days (null keeps files), its row locked; undefined when it is gone. */
export async function lockScanFileRetention(db: Db, workspaceId: string): Promise<number | null | undefined> {
  const { rows } = await db.query<{ days: number | null }>(
    sql`SELECT scan_file_retention_days AS days FROM workspaces WHERE id = ${workspaceId} FOR UPDATE`,
  );
  return rows.length ? rows[0]!.days : undefined;
}

export async function readScanFileRetention(db: Db, workspaceId: string): Promise<number | null> {
  const { rows } = await db.query<{ days: number | null }>(
    sql`SELECT scan_file_retention_days AS days FROM workspaces WHERE id = ${workspaceId}`,
  );
  return rows[0]?.days ?? null;
}

export async function updateScanFileRetention(
  db: Db,
  workspaceId: string,
  days: number | null,
): Promise<void> {
  await db.query(sql`UPDATE workspaces SET scan_file_retention_days = ${days} WHERE id = ${workspaceId}`);
}
