import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { CliError, EXIT, usageError, type ExitCode } from '../errors.js';
import type { Context } from '../context.js';
import { filterQuery, type FilterOptions } from '../filters.js';
import { formatBytes } from '../output.js';

export const EXPORT_FORMATS = ['sarif', 'csv', 'jsonl', 'cyclonedx-vex'];

export interface ExportOptions extends FilterOptions {
  format?: string;
  output?: string;
}

/**
 * `vuln-triage export cases`: streams `GET /api/v1/exports/cases?format=…` (DECISIONS §10) to
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
    throw err;
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
