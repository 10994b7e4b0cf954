import { Migration } from '@mikro-orm/migrations';

/**
 * The `workflows:write` scope (issue 14): managing mapped workflows. A workspace's first key
 * gets it from now on; the first keys created before — those holding every scope a first key
 * had (as in m012) — gain it here. The m008 trigger bumps `key_version`, so cached scopes drop.
 */
export class M014WorkflowsScope extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      UPDATE api_keys SET scopes = array_append(scopes, 'workflows:write')
      WHERE scopes @> ARRAY['triage:write', 'scans:write', 'scans:read', 'cases:write', 'usage:read']::text[]
        AND NOT scopes @> ARRAY['workflows:write']::text[]`);
  }

  override async down(): Promise<void> {
    this.addSql(`UPDATE api_keys SET scopes = array_remove(scopes, 'workflows:write')`);
  }
}
