import type { FastifyInstance } from 'fastify';

/** The finding the triage benches send: no CVE, so the enrichment lookups find nothing. */
export const BENCH_TRIAGE_PAYLOAD = {
  title: 'Outdated OpenSSL on an internal host',
  severity: 'MEDIUM',
  description: 'OpenSSL 1.1.1 reached end of life',
};

/** One `POST /api/v1/triage` of {@link BENCH_TRIAGE_PAYLOAD} in process, as `key`; anything but 200 throws. */
export function triageInProcess(app: FastifyInstance, key: string): () => Promise<void> {
  const headers = { 'x-api-key': key };
  return async () => {
    const r = await app.inject({
      method: 'POST',
      url: '/api/v1/triage',
      headers,
      payload: BENCH_TRIAGE_PAYLOAD,
    });
    if (r.statusCode !== 200) throw new Error(`triage answered ${r.statusCode}: ${r.body}`);
  };
}
