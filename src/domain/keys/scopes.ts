/** Scopes of docs/api.md#keys. */
export const SCOPES = [
  'triage:write',
  'scans:write',
  'scans:read',
  'cases:write',
  'usage:read',
  'keys:write',
  'workflows:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * A workspace's first key has every scope but `keys:write` and `workflows:write` (docs/api.md#keys:
 * workflows hold third-party credentials, so managing them is granted deliberately).
 * `cases:write` joined later: migration m012 gives it to the first keys created before (the keys
 * holding all the others).
 */
export const FIRST_KEY_SCOPES: Scope[] = [
  'triage:write',
  'scans:write',
  'scans:read',
  'cases:write',
  'usage:read',
];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
