import type { Db } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import type { PasswordReset } from '../../db/entities/index.js';

/** Table `password_resets` (docs/console.md#password-reset): only the HMAC of a token is stored. */

export async function insertPasswordReset(db: Db, r: Omit<PasswordReset, 'usedAt'>): Promise<void> {
  await db.query(
    sql`INSERT INTO password_resets (id, user_id, token_hash, created_at, expires_at)
        VALUES (${r.id}, ${r.userId}, ${r.tokenHash}, ${r.createdAt}, ${r.expiresAt})`,
  );
}

/** The reset of a token hash, locked for the caller's transaction (a reset is used once). */
export async function findResetForUpdate(db: Db, tokenHash: string): Promise<PasswordReset | null> {
  const { rows } = await db.query<PasswordReset>(
    sql`SELECT id, user_id AS "userId", token_hash AS "tokenHash", created_at AS "createdAt",
               expires_at AS "expiresAt", used_at AS "usedAt"
          FROM password_resets WHERE token_hash = ${tokenHash} FOR UPDATE`,
  );
  return rows[0] ?? null;
}

/** Uses up every open reset of a user: the one just used, and any other link still out. */
export async function useUpResets(db: Db, userId: string, at: Date): Promise<void> {
  await db.query(
    sql`UPDATE password_resets SET used_at = ${at} WHERE user_id = ${userId} AND used_at IS NULL`,
  );
}
