import { EntitySchema } from '@mikro-orm/core';

/**
 * The record of a workspace's deletion (docs/operations.md#end-of-life), table
 * `workspace_deletions` of migration m030. It has no foreign key to `workspaces`: it outlives
 * the data it records. Written with SQL by `domain/workspaces/deletion-store.ts`; this schema
 * exists so the schema equality test covers the table.
 */
export interface WorkspaceDeletionRow {
  id: string;
  workspaceId: string;
  workspaceName: string;
  actor: string;
  ip: string | null;
  userAgent: string | null;
  requestedAt: Date;
  finishedAt: Date | null;
  scansRemoved: number;
  filesRemoved: number;
}

const text = { type: 'text' } as const;
const nullableText = { type: 'text', nullable: true } as const;
const timestamp = { type: 'Date', columnType: 'timestamptz' } as const;

export const WorkspaceDeletionSchema = new EntitySchema<WorkspaceDeletionRow>({
  name: 'WorkspaceDeletion',
  tableName: 'workspace_deletions',
  properties: {
    id: { type: 'uuid', primary: true },
    workspaceId: { type: 'uuid' },
    workspaceName: text,
    actor: text,
    ip: nullableText,
    userAgent: nullableText,
    requestedAt: { ...timestamp, defaultRaw: 'now()', onCreate: () => new Date() },
    finishedAt: { ...timestamp, nullable: true },
    scansRemoved: { type: 'integer', default: 0 },
    filesRemoved: { type: 'integer', default: 0 },
  },
  uniques: [{ name: 'workspace_deletions_workspace_id_key', properties: ['workspaceId'] }],
});
