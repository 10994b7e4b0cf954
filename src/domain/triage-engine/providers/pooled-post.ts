import { Pool } from 'undici';

/** The response headers the provider client reads (`Headers` satisfies it). */
export type ResponseHeaders = Pick<Headers, 'get' | 'has'>;

/** A provider's answer, its body read whole as text. */
export interface ProviderAnswer {
  status: number;
  headers: ResponseHeaders;
  text: string;
}

/** One POST of a string body; rejects when the signal aborts or the connection fails. */
export type ProviderTransport = (
  url: string,
  request: { headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<ProviderAnswer>;

/**
 * The provider client's transport: an undici `Pool` per provider origin (keep-alive, up to 256
 * connections each). No `Response` or `Headers` object is built for an answer (together ~60 µs
 * a call here): the status, undici's header record behind a `get`/`has` view, and the body as
 * text are all the client reads. Responses are small JSON documents: no compression is asked
 * for, no redirect is followed (a model API answers a POST itself). Idle connections close after
 * undici's keep-alive timeout and do not hold the process open. Measured against the
 * `node:http` client it replaced in `bench/triage/provider-client.ts` (bench/README.md).
 */
const pools = new Map<string, Pool>();

function poolFor(origin: string): Pool {
  let pool = pools.get(origin);
  if (pool === undefined) {
    pool = new Pool(origin, { connections: 256 });
    pools.set(origin, pool);
  }
  return pool;
}

/** A read-only view of undici's header record (names arrive lower-cased). */
function headerView(raw: Record<string, string | string[] | undefined>): ResponseHeaders {
  const get = (name: string): string | null => {
    const value = raw[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  };
  return { get, has: (name) => get(name) !== null };
}

/** Where a provider URL posts: its origin's pool and the path. One per configured URL. */
const targets = new Map<string, { pool: Pool; path: string }>();

function targetOf(url: string): { pool: Pool; path: string } {
  let target = targets.get(url);
  if (target === undefined) {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new TypeError(`unsupported protocol ${u.protocol}`);
    target = { pool: poolFor(u.origin), path: u.pathname + u.search };
    targets.set(url, target);
  }
  return target;
}

export const pooledPost: ProviderTransport = async (url, { headers, body, signal }) => {
  const target = targetOf(url);
  const res = await target.pool.request({
    path: target.path,
    method: 'POST',
    headers,
    body,
    signal,
  });
  return { status: res.statusCode, headers: headerView(res.headers), text: await res.body.text() };
};

/** Closes every pool (tests, benches; not needed for the process to exit). */
export async function closeProviderPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  targets.clear();
  await Promise.all(all.map((p) => p.close()));
}
