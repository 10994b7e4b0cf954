import { usageError } from './errors.js';
import type { Query } from './http-client.js';

/** The list filters of `GET /api/v1/cases` (docs/cases.md#lists-and-filters) as flags; the server validates the values. */
export interface FilterOptions {
  severity?: string;
  status?: string;
  cve?: string;
  asset?: string;
  scan?: string;
  kev?: string;
  /** `--filter key=value`, repeatable: any filter this client has no flag for yet (a newer server's). */
  filter?: string[];
}

/**
 * The query string of a filtered list. Values pass through as typed (severities upper-cased),
 * so the server's 400 names the bad one with its path.
 */
export function filterQuery(o: FilterOptions): Query {
  const q: Query = {
    severity: o.severity?.toUpperCase(),
    status: o.status,
    cve: o.cve,
    asset: o.asset,
    scan: o.scan,
    kev: o.kev,
  };
  for (const pair of o.filter ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usageError(`--filter takes key=value, not ${pair}`);
    q[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return q;
}

/** Commander's collector for repeatable options. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
