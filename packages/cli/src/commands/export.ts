import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { CliError, EXIT, usageError, type ExitCode } from '../errors.js';
import type { Context } from '../context.js';
import { filterQuery, type FilterOptions } from '../filters.js';
import { formatBytes } from '../output.js';
import { countBar } from '../progress.js';

export const EXPORT_FORMATS = ['sarif', 'csv', 'jsonl', 'cyclonedx-vex'];

export interface ExportOptions extends FilterOptions {
  format?: string;
  output?: string;
}

/**
 * `vuln-triage export cases`: streams `GET /api/v1/exports/cases?format=…` (docs/exports.md) to
 * `-o FILE` (through `FILE.part`, renamed when complete, so a cut download never looks whole) or
 * to stdout. A server without exports answers 404: said plainly, exit 4.
 */
export async function exportCases(ctx: Context, o: ExportOptions): Promise<ExitCode> {
  if (!o.format || !EXPORT_FORMATS.includes(o.format)) {
    throw usageError(`--format must be one of ${EXPORT_FORMATS.join(', ')}`);
  }
  let res: Response;
  try {
    res = await ctx.client.send('GET', '/api/v1/exports/cases', {
      query: { ...filterQuery(o), format: o.format },
    });
  } catch (err) {
    if (err instanceof CliError && err.problem?.status === 404) {
      throw new CliError(
        'Exports are not available on this server yet (GET /api/v1/exports/cases answered 404).',
        EXIT.service,
        err.problem,
      );
    }
    // Too many cases to stream in one request: the server renders it as a job instead.
    if (err instanceof CliError && err.problem?.status === 413) res = await exportAsJob(ctx, o);
    else throw err;
  }
  if (!res.body) throw new CliError('The export answer has no body.', EXIT.service);
  const body = Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
  if (!o.output || o.output === '-') {
    await pipeline(body, process.stdout);
    return EXIT.ok;
  }
  const part = `${o.output}.part`;
  let bytes = 0;
  body.on('data', (c: Buffer) => (bytes += c.length));
  try {
    await pipeline(body, createWriteStream(part));
    await rename(part, o.output);
  } catch (err) {
    await rm(part, { force: true });
    throw new CliError(`The export download broke off: ${(err as Error).message}`, EXIT.service);
  }
  ctx.note(`Wrote ${o.output} (${formatBytes(bytes)})`);
  return EXIT.ok;
}

interface ExportJob {
  id: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  rowsTotal: number | null;
  rowsWritten: number;
  error: string | null;
  downloadUrl: string | null;
}

/** The job's filter: the query's comma lists as arrays, `kev` as a boolean (POST /api/v1/exports). */
function jobFilter(o: ExportOptions): Record<string, unknown> {
  const list = (v?: string) => (v ? v.split(',').filter(Boolean) : undefined);
  const filter: Record<string, unknown> = {
    severity: list(o.severity?.toUpperCase()),
    status: list(o.status),
    cve: o.cve,
    asset: o.asset,
    scan: o.scan,
    kev: o.kev === undefined ? undefined : o.kev === 'true',
  };
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined));
}

/**
 * Creates an export job, follows it with a bar (cases written of the total), and opens its
 * signed download link (fetched from the configured service, whatever host the link names).
 */
async function exportAsJob(ctx: Context, o: ExportOptions): Promise<Response> {
  let job = await ctx.client.json<ExportJob>('POST', '/api/v1/exports', {
    body: { format: o.format, filter: jobFilter(o) },
  });
  ctx.note(`Large export: rendering it as job ${job.id}`);
  const bar = countBar(ctx.bars, 'Exporting', 'cases');
  try {
    while (job.status === 'queued' || job.status === 'running') {
      await new Promise((r) => setTimeout(r, 500));
      job = await ctx.client.json<ExportJob>('GET', `/api/v1/exports/${job.id}`);
      bar.update(job.rowsWritten, job.rowsTotal ?? 0);
    }
  } finally {
    bar.stop();
  }
  if (job.status !== 'completed' || !job.downloadUrl) {
    throw new CliError(`The export job failed: ${job.error ?? 'no reason given'}`, EXIT.service);
  }
  const link = new URL(job.downloadUrl);
  return ctx.client.send('GET', link.pathname, { query: Object.fromEntries(link.searchParams) });
}
