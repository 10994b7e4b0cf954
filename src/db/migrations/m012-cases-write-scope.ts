import { Migration } from '@mikro-orm/migrations';

/**
 * The `cases:write` scope (docs/api.md#keys, docs/cases.md#statuses): changing a case's status no longer comes
 * with `scans:write`. A workspace's first key gets it from now on; existing first keys — the
 * keys holding every scope a first key was given (`triage:write`, `scans:write`, `scans:read`,
 * `usage:read`) — gain it here, so no workspace loses the ability to change its cases. Keys
 * created with fewer scopes (an upload-only CI key) are left as they are: they never could be
 * trusted with a case. The `api_keys` trigger of m008 bumps `key_version`, so every process
 * drops its cached scopes.
 */
export const GRANT_CASES_WRITE = `
  UPDATE api_keys SET scopes = array_append(scopes, 'cases:write')
  WHERE scopes @> ARRAY['triage:write', 'scans:write', 'scans:read', 'usage:read']::text[]
    AND NOT scopes @> ARRAY['cases:write']::text[]`;

export class M012CasesWriteScope extends Migration {
  override async up(): Promise<void> {
    this.addSql(GRANT_CASES_WRITE);
  }

  override async down(): Promise<void> {
    this.addSql(`UPDATE api_keys SET scopes = array_remove(scopes, 'cases:write')`);
  }
}
