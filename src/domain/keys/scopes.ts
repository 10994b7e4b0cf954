/** Scopes of DECISIONS §4. */
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
 * A workspace's first key has every scope but `keys:write` and `workflows:write` (DECISIONS §4:
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
