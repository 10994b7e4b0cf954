import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { AppError } from '../../lib/errors.js';
import { recordAuditEvent } from '../keys/audit-log.js';
import type { Actor } from '../keys/key-service.js';
import type { InvalidationBus } from '../keys/invalidation-bus.js';
import type { ScanStorage } from '../scans/scan-storage.js';
import {
  addDeletionProgress,
  deleteScanSlice,
  deleteWorkspaceRow,
  findDeletion,
  finishDeletion,
  insertDeletion,
  lockWorkspaceName,
  memberRole,
  shutWorkspace,
  unfinishedDeletionIds,
  type DeletionRecord,
} from './deletion-store.js';

export type { DeletionRecord } from './deletion-store.js';

/** Scans removed per statement: each takes its findings and evidence with it. */
const SCAN_SLICE = 500;

export interface WorkspaceDeletionDeps {
  db: Db;
  bus: InvalidationBus | null;
  storage: ScanStorage;
  clock: () => Date;
  /** Queues the removal job of a deletion (idempotent by deletion id). */
  enqueue(deletionId: string): Promise<void>;
  /** Told when the job could not be queued: the maintenance run queues it again. */
  onEnqueueError?(err: Error): void;
}

/** What the removal job did in one run. */
export type RemovalOutcome =
  | { kind: 'missing' }
  | { kind: 'already_finished' }
  | { kind: 'finished'; scansRemoved: number; filesRemoved: number };

/**
 * A workspace's end of life (docs/operations.md#end-of-life): an owner's request shuts it at
 * once, and a job removes its data.
 */
export interface WorkspaceDeletions {
  /**
   * The owner's request, after typing the workspace's name. In one transaction: the audit event,
   * the record that outlives the workspace, every key revoked, every session and membership
   * ended; then every process is told to forget the keys, and the removal is queued. A second
   * request answers the first one's record.
   */
  request(input: {
    /** The workspace named in the request: another than the session's is not found. */
    workspaceId: string;
    session: { workspaceId: string; userId: string };
    confirmName: string;
    actor: Actor;
  }): Promise<DeletionRecord>;
  /** The record of a deletion, for its status resource; null when there is none. */
  status(id: string): Promise<DeletionRecord | null>;
  /**
   * The job: removes the workspace's scans in slices, then the workspace row (every table that
   * names it follows), then its stored files and objects, and marks the record finished. Every
   * step is safe to run again, so a retried or duplicated job finishes the same removal.
   */
  remove(deletionId: string): Promise<RemovalOutcome>;
  /** Queues again the removals not finished (a job lost with its queue); returns how many. */
  requeueUnfinished(): Promise<number>;
}

export function createWorkspaceDeletions(deps: WorkspaceDeletionDeps): WorkspaceDeletions {
  const enqueueQuietly = (id: string) =>
    deps.enqueue(id).catch((err: unknown) => deps.onEnqueueError?.(err as Error));

  return {
    async request(input) {
      if (input.workspaceId !== input.session.workspaceId)
        throw new AppError('not_found', 'No such workspace.');
      const record = await withTransaction(deps.db, async (tx) => {
        const name = await lockWorkspaceName(tx, input.workspaceId);
        if (name === null) throw new AppError('not_found', 'No such workspace.');
        if ((await memberRole(tx, input.workspaceId, input.session.userId)) !== 'owner') {
          throw new AppError('insufficient_role', 'Only an owner can delete the workspace.');
        }
        if (input.confirmName.trim() !== name) {
          throw new AppError(
            'confirmation_mismatch',
            "The name typed is not the workspace's name; nothing was deleted.",
          );
        }
        const now = deps.clock();
        await recordAuditEvent(tx, input.workspaceId, 'workspace_delete', input.actor, {
          workspaceName: name,
        });
        const rec = await insertDeletion(tx, {
          id: randomUUID(),
          workspaceId: input.workspaceId,
          workspaceName: name,
          actor: input.actor.actor,
          ip: input.actor.ip,
          userAgent: input.actor.userAgent,
          requestedAt: now,
        });
        await shutWorkspace(tx, input.workspaceId, now);
        return rec;
      });
      await deps.bus?.publish({ kind: 'workspace', id: input.workspaceId });
      await enqueueQuietly(record.id);
      return record;
    },

    status: (id) => findDeletion(deps.db, id),

    async remove(deletionId) {
      const d = await findDeletion(deps.db, deletionId);
      if (!d) return { kind: 'missing' };
      if (d.finishedAt) return { kind: 'already_finished' };
      let scansRemoved = 0;
      for (;;) {
        const n = await deleteScanSlice(deps.db, d.workspaceId, SCAN_SLICE);
        if (n === 0) break;
        scansRemoved += n;
        await addDeletionProgress(deps.db, d.id, { scansRemoved: n, filesRemoved: 0 });
      }
      await deleteWorkspaceRow(deps.db, d.workspaceId);
      // After the rows: an upload that committed its file before the workspace row went has its
      // scan row removed above, and one that had not yet cannot insert its row any more.
      let filesRemoved = 0;
      for await (const entry of deps.storage.entries(d.workspaceId)) {
        if (!entry.key?.startsWith(`${d.workspaceId}/`)) continue;
        await deps.storage.removeEntry(entry);
        filesRemoved++;
      }
      await addDeletionProgress(deps.db, d.id, { scansRemoved: 0, filesRemoved });
      await finishDeletion(deps.db, d.id, deps.clock());
      await deps.bus?.publish({ kind: 'workspace', id: d.workspaceId });
      return { kind: 'finished', scansRemoved, filesRemoved };
    },

    async requeueUnfinished() {
      const ids = await unfinishedDeletionIds(deps.db);
      for (const id of ids) await deps.enqueue(id);
      return ids.length;
    },
  };
}
