import type { ApiKey } from '../../db/entities/index.js';
import { maskApiKey } from './key-format.js';
import { effectiveKeyState, rotationHealth, type RotationHealth } from './key-lifecycle.js';

/** A key as every API answer shows it: never the secret, always the mask (docs/api.md#keys). */
export interface KeyView {
  id: string;
  label: string;
  masked: string;
  scopes: string[];
  status: string;
  rotationHealth: RotationHealth;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  graceEndsAt: string | null;
  successorId: string | null;
  revokedAt: string | null;
}

export function viewKey(
  key: Pick<
    ApiKey,
    'id' | 'label' | 'prefix' | 'lastFour' | 'scopes' | 'state' | 'createdAt' | 'expiresAt' | 'graceEndsAt'
  > &
    Partial<Pick<ApiKey, 'lastUsedAt' | 'successorId' | 'revokedAt'>>,
  rotationPolicyDays: number,
  now: Date,
): KeyView {
  return {
    id: key.id,
    label: key.label,
    masked: maskApiKey(key.prefix, key.lastFour),
    scopes: [...key.scopes],
    status: effectiveKeyState(key, now),
    rotationHealth: rotationHealth(key.createdAt, rotationPolicyDays, now),
    createdAt: key.createdAt.toISOString(),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    graceEndsAt: key.graceEndsAt?.toISOString() ?? null,
    successorId: key.successorId ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}
