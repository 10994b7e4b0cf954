import { stat } from 'node:fs/promises';
import path from 'node:path';
import { CliError, EXIT, usageError, type ExitCode } from '../errors.js';
import { countFailing, THRESHOLDS, type Threshold } from '../fail-on.js';
import { fileSha256, idempotencyKeyFor } from '../idempotency.js';
import type { Context } from '../context.js';
import { uploadBar } from '../progress.js';
import { failureReason, waitForScan } from '../scan-status.js';
import { printScanSummary, type UploadResult } from '../scan-summary.js';

export type { UploadResult } from '../scan-summary.js';
import { uploadScanFile } from '../upload.js';

export interface ScanUploadOptions {
  format?: string;
  name?: string;
  asset?: string;
  environment?: string;
  criticality?: string;
  internetExposed?: boolean;
  triage?: string;
  wait?: boolean;
  failOn?: string;
  failOnAll?: boolean;
  gzip?: boolean;
  idempotencyKey?: string;
  timeout?: string;
  pollInterval?: string;
}

const TRIAGE_MODES = ['none', 'new', 'all'];

function checkOptions(o: ScanUploadOptions): { threshold: Threshold | null } {
  if (o.triage !== undefined && !TRIAGE_MODES.includes(o.triage)) {
    throw usageError(`--triage must be one of ${TRIAGE_MODES.join(', ')}, not ${o.triage}`);
  }
  const threshold = o.failOn?.toUpperCase();
  if (threshold !== undefined && !(THRESHOLDS as readonly string[]).includes(threshold)) {
    throw usageError(`--fail-on must be one of ${THRESHOLDS.join(', ')}, not ${o.failOn}`);
  }
  if (o.failOnAll && threshold === undefined) throw usageError('--fail-on-all needs --fail-on LEVEL');
  if (o.timeout !== undefined && !/^\d+$/.test(o.timeout)) throw usageError('--timeout takes whole seconds');
  return { threshold: (threshold as Threshold | undefined) ?? null };
}

/** A 400 naming the `triage` query parameter: a server from before upload triage existed. */
function triageUnsupported(err: unknown): boolean {
  return (
    err instanceof CliError &&
    err.problem?.status === 400 &&
    (err.problem.errors ?? []).some(
      (e) => (e.path ?? '').includes('triage') || (e.message ?? '').includes('triage'),
    )
  );
}

/**
 * `vuln-triage scan upload FILE…`: for each file, hash it (the Idempotency-Key), stream it with
 * an upload bar, and with `--wait` (implied by `--fail-on`) poll the parse with a second bar;
 * then a summary table and the exit code (README "CLI": 0, 1 threshold met, 3 scan failed).
 */
export async function scanUpload(ctx: Context, files: string[], o: ScanUploadOptions): Promise<ExitCode> {
  const { threshold } = checkOptions(o);
  const sizes = await Promise.all(
    files.map(async (f) => {
      const s = await stat(f).catch(() => null);
      if (!s?.isFile()) throw usageError(`${f}: no such file`);
      return s.size;
    }),
  );
  const wait = o.wait === true || threshold !== null;
  const results: UploadResult[] = [];
  let exit: ExitCode = EXIT.ok;

  for (const [i, file] of files.entries()) {
    const label = path.basename(file);
    const scanOptions = {
      format: o.format,
      name: o.name ?? label,
      asset: o.asset,
      environment: o.environment?.toUpperCase(),
      criticality: o.criticality?.toUpperCase(),
      internetExposed: o.internetExposed,
      triage: o.triage,
    };
    const idempotencyKey = o.idempotencyKey ?? idempotencyKeyFor(await fileSha256(file), scanOptions);
    const bar = uploadBar(ctx.bars, label, sizes[i]!);
    let accepted;
    try {
      accepted = await uploadScanFile(
        ctx.client,
        { file, size: sizes[i]!, gzip: o.gzip === true, query: scanOptions, idempotencyKey },
        (sent) => bar.update(sent),
      );
    } catch (err) {
      if (triageUnsupported(err)) {
        throw new CliError(
          `This server does not support --triage yet (it refused the triage parameter): upload without --triage.\n${(err as CliError).message}`,
          EXIT.usage,
          (err as CliError).problem,
        );
      }
      throw new CliError(
        `${file}: ${(err as Error).message}`,
        (err as CliError).exitCode ?? EXIT.service,
        (err as CliError).problem ?? null,
      );
    } finally {
      bar.stop();
    }
    if (!ctx.json) ctx.note(`${label}: uploaded as scan ${accepted.scanId}`);
    const result: UploadResult = {
      file,
      scanId: accepted.scanId,
      statusUrl: accepted.statusUrl,
      scan: null,
      failOn: null,
    };
    results.push(result);
    if (!wait) continue;

    const scan = await waitForScan(ctx.client, accepted.scanId, {
      pollMs: Number(o.pollInterval ?? 1000),
      timeoutMs: Number(o.timeout ?? 3600) * 1000,
      bars: ctx.bars,
      label,
    });
    result.scan = scan;
    if (scan.status === 'failed') {
      process.stderr.write(
        `${ctx.errStyle.red('error:')} ${file}: scan ${scan.scanId} failed: ${failureReason(scan)}\n`,
      );
      exit = EXIT.scanFailed;
      continue;
    }
    if (threshold !== null) {
      const cases = await countFailing(ctx.client, scan.scanId, threshold, o.failOnAll === true);
      result.failOn = { threshold, scope: o.failOnAll ? 'all' : 'new', cases };
      if (cases > 0 && exit === EXIT.ok) exit = EXIT.threshold;
    }
  }

  if (ctx.json) ctx.print(JSON.stringify({ scans: results, exitCode: exit }, null, 2));
  else if (!ctx.quiet) printScanSummary(ctx, results, wait);
  return exit;
}
