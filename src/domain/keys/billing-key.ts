import type { ApiKey } from '../../db/entities/index.js';
import { invalidRequest } from '../../lib/errors.js';
import { authenticates, effectiveKeyState } from './key-lifecycle.js';

/**
 * The key a console action is done as (docs/console.md): the console user has no key of their own, and
 * AI calls are billed to a key (docs/triage.md#billing), so an upload with triage or a triage from the
 * Cases page names one of the workspace's keys. It must be usable now (active, or rotating within
 * its grace) and hold every scope the same request would need with that key. Anything else is a
 * 400 naming `path`, the same for another workspace's key as for an unknown one.
 */
export function billingKeyOf(
  keys: readonly ApiKey[],
  keyId: string,
  scopes: readonly string[],
  now: Date,
  path: string,
): ApiKey {
  const key = keys.find((k) => k.id === keyId);
  if (!key || !authenticates(effectiveKeyState(key, now))) {
    throw invalidRequest([{ path, message: 'must be an active key of this workspace' }]);
  }
  const missing = scopes.filter((s) => !key.scopes.includes(s));
  if (missing.length > 0) {
    throw invalidRequest([{ path, message: `must be a key with the ${missing.join(' and ')} scope` }]);
  }
  return key;
}
