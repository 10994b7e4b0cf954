/**
 * Case export throughput and memory (docs/exports.md): each format rendered from the database to a
 * discarding sink, against `COPY (SELECT …) TO STDOUT (FORMAT csv)` of the same rows in the same
 * run: the export's own query (the baseline the ratios use), and the cases' bare columns for
 * reference. Peak RSS is sampled every 20 ms during each run.
 *
 *   npx tsx bench/exports/export-throughput.ts --cases 100000 [--formats csv,jsonl,sarif,cyclonedx-vex]
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { createOrm, migrate } from '../../src/db/orm.js';
import { viewCaseRecord } from '../../src/domain/cases/case-views.js';
import { exportCasesQuery, iterateExportCases } from '../../src/domain/exports/export-store.js';
import { EXPORT_FORMATS, RENDERERS, type ExportFormat } from '../../src/domain/exports/formats.js';
import { createBenchDatabase } from '../lib/bench-db.js';
import { seedCases } from '../lib/seed-cases.js';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '100000' },
    formats: { type: 'string', default: EXPORT_FORMATS.join(',') },
  },
});
const N = Number(values.cases);
const formats = values.formats!.split(',') as ExportFormat[];

function sink(): { stream: Writable; bytes: () => number } {
  let bytes = 0;
  return {
    stream: new Writable({
      write(chunk: Buffer, _e, done) {
        bytes += chunk.length;
        done();
      },
    }),
    bytes: () => bytes,
  };
}

async function measure(
  name: string,
  run: () => Promise<number>,
): Promise<{ name: string; s: number; bytes: number; rss: number }> {
  global.gc?.();
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const t0 = process.hrtime.bigint();
  const bytes = await run();
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  clearInterval(timer);
  return { name, s, bytes, rss: Math.max(peak, process.memoryUsage().rss) / 2 ** 20 };
}

const db = await createBenchDatabase('bench_export');
const orm = await createOrm(db.url);
await migrate(orm, db.url);
await orm.close();
const pool = new pg.Pool({ connectionString: db.url, max: 4 });
try {
  const ws = randomUUID();
  console.log(`seeding ${N.toLocaleString()} cases (one finding each)…`);
  await pool.query(`INSERT INTO workspaces (id, name, plan) VALUES ($1, 'bench', 'service')`, [ws]);
  await seedCases(pool, ws, N);

  const results = [];
  /** PostgreSQL alone writing `sql` as CSV to a discarding sink. */
  const copyCsv = (sql: string) => async () => {
    const client = await pool.connect();
    try {
      const out = sink();
      await pipeline(
        client.query(copyStreams.to(`COPY (${sql}) TO STDOUT (FORMAT csv, HEADER)`)),
        out.stream,
      );
      return out.bytes();
    } finally {
      client.release();
    }
  };
  // The baseline: the export's own query (same rows, same columns, newest sighting, KEV, EPSS),
  // all of it in one COPY — what PostgreSQL takes to hand over what the formats render.
  const page = exportCasesQuery(ws, {}, null, N + 1);
  const literal = page.text.replace(/\$(\d+)/g, (_, i: string) => {
    const v = page.values[Number(i) - 1];
    return typeof v === 'number' ? String(v) : pg.Client.prototype.escapeLiteral(String(v));
  });
  results.push(await measure('COPY of the export query [baseline]', copyCsv(literal)));
  // For reference: the cases' own columns alone (no newest sighting, KEV or EPSS lookups).
  results.push(
    await measure(
      'COPY of bare case columns',
      copyCsv(
        `SELECT c.id, c.title, c.severity, c.status, c.cve_ids, c.cwe_ids, c.cvss_score, c.asset, c.first_seen, c.last_seen,
                c.sightings, c.fingerprint FROM cases c WHERE c.workspace_id = '${ws}' ORDER BY c.seq DESC`,
      ),
    ),
  );
  results.push(
    await measure('query only (iterateExportCases)', async () => {
      let n = 0;
      for await (const c of iterateExportCases(pool, ws, {})) n += c.title.length > 0 ? 1 : 0;
      return n;
    }),
  );
  for (const format of formats) {
    const meta = {
      toolName: 'bench',
      toolVersion: '0',
      baseUrl: '',
      generatedAt: new Date(),
      serial: randomUUID(),
    };
    results.push(
      await measure(format, async () => {
        const out = sink();
        await pipeline(
          RENDERERS[format].render(iterateExportCases(pool, ws, {}), meta, viewCaseRecord),
          out.stream,
        );
        return out.bytes();
      }),
    );
  }
  const base = results[0]!;
  console.log(`\n${N.toLocaleString()} cases, Node ${process.version}`);
  console.log('format | seconds | cases/s | MB | × baseline | peak RSS MB');
  for (const r of results) {
    console.log(
      `${r.name} | ${r.s.toFixed(2)} | ${Math.round(N / r.s).toLocaleString()} | ${(r.bytes / 1e6).toFixed(1)} | ${(base.s / r.s).toFixed(2)} | ${r.rss.toFixed(0)}`,
    );
  }
} finally {
  await pool.end();
  await db.drop();
}
