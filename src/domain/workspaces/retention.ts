import type { Db } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { AppError } from '../../lib/errors.js';
import { recordAuditEvent } from '../keys/audit-log.js';
import type { Actor } from '../keys/key-service.js';
import { memberRole } from './deletion-store.js';
import { lockScanFileRetention, readScanFileRetention, updateScanFileRetention } from './retention-store.js';

/** A workspace's retention settings (docs/operations.md#retention). */
export interface RetentionView {
  /** Days a completed scan's raw file is kept after its upload; null keeps it (the default). */
  scanFileRetentionDays: number | null;
}

export interface RetentionSettings {
  get(workspaceId: string): Promise<RetentionView>;
  /**
   * Sets the scan file retention: owners only (it removes data for good), with an audit event
   * (`retention_change`, the old and new days) in the same transaction. The maintenance run
   * applies it within a minute.
   */
  set(input: {
    session: { workspaceId: string; userId: string };
    scanFileRetentionDays: number | null;
    actor: Actor;
  }): Promise<RetentionView>;
}

export function createRetentionSettings(db: Db): RetentionSettings {
  return {
    async get(workspaceId) {
      return { scanFileRetentionDays: await readScanFileRetention(db, workspaceId) };
    },
    async set(input) {
      const { workspaceId, userId } = input.session;
      return withTransaction(db, async (tx) => {
        const before = await lockScanFileRetention(tx, workspaceId);
        if (before === undefined) throw new AppError('not_found', 'No such workspace.');
        if ((await memberRole(tx, workspaceId, userId)) !== 'owner') {
          throw new AppError('insufficient_role', 'Only an owner can change how long data is kept.');
        }
        if (before !== input.scanFileRetentionDays) {
          await updateScanFileRetention(tx, workspaceId, input.scanFileRetentionDays);
          await recordAuditEvent(tx, workspaceId, 'retention_change', input.actor, {
            setting: 'scanFileRetentionDays',
            from: before,
            to: input.scanFileRetentionDays,
          });
        }
        return { scanFileRetentionDays: input.scanFileRetentionDays };
      });
    },
  };
}
