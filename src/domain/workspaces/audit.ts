import type { Db } from '../../db/pool.js';
import type { AuditAction } from '../../db/entities/index.js';
import type { Actor } from '../keys/key-service.js';
import { insertAuditEvent } from '../keys/keys-store.js';

/**
 * An audit event about a workspace's people (docs/console.md#members-and-roles): no key, the
 * actor with their address and user agent, and details naming the member or invitation — never
 * a token or password.
 */
export async function auditMembers(
  db: Db,
  workspaceId: string,
  action: AuditAction,
  actor: Actor,
  details: Record<string, unknown>,
  at: Date,
): Promise<void> {
  await insertAuditEvent(db, { workspaceId, keyId: null, action, ...actor, details, at });
}
