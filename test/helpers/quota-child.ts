/**
 * A separate process that makes N concurrent reservations against one workspace's quota
 * and prints how many succeeded: the quota test runs two of these at once.
 * argv: DATABASE_URL WORKSPACE_ID COUNT LIMIT
 */
import { createPool } from '../../src/db/pool.js';
import { createQuotaService } from '../../src/domain/usage/quota.js';

const [url, workspaceId, count, limit] = process.argv.slice(2);
const pool = createPool(url!, 20);
const quota = createQuotaService(pool);
const results = await Promise.all(
  Array.from({ length: Number(count) }, () => quota.reserve(workspaceId!, 1, Number(limit))),
);
// Reservations are held, not settled: a release here would hand capacity to the other process.
const granted = results.flatMap((r) => (r.ok ? [r.reservation.id] : []));
process.stdout.write(JSON.stringify({ granted }));
await pool.end();
