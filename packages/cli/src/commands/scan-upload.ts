import { stat } from 'node:fs/promises';
import path from 'node:path';
import { uploadScan, type ScanAccepted, type UploadQuery } from '@vuln-triage/sdk';
import { CliError, EXIT, toCliError, usageError, type ExitCode } from '../errors.js';
import { countFailing, THRESHOLDS, type Threshold } from '../fail-on.js';
import type { Context } from '../context.js';
import { uploadBar } from '../progress.js';
import { failureReason, waitForScan } from '../scan-status.js';
import { printScanSummary, type UploadResult } from '../scan-summary.js';
import { exportCases } from './export.js';

export type { UploadResult } from '../scan-summary.js';

export interface ScanUploadOptions {
  format?: string;
  name?: string;
  asset?: string;
  environment?: string;
  criticality?: string;
  internetExposed?: boolean;
  /** `false` with `--no-resolve-missing` (docs/ingestion.md#rescans). */
  resolveMissing?: boolean;
  triage?: string;
  wait?: boolean;
  failOn?: string;
  failOnPriority?: string;
  failOnAll?: boolean;
  sarifOut?: string;
  gzip?: boolean;
  idempotencyKey?: string;
  timeout?: string;
  pollInterval?: string;
}

const TRIAGE_MODES = ['none', 'new', 'all'];

function thresholdOf(flag: string, value: string | undefined): Threshold | null {
  const threshold = value?.toUpperCase();
  if (threshold !== undefined && !(THRESHOLDS as readonly string[]).includes(threshold)) {
    throw usageError(`${flag} must be one of ${THRESHOLDS.join(', ')}, not ${value}`);
  }
  return (threshold as Threshold | undefined) ?? null;
}

function checkOptions(
  o: ScanUploadOptions,
  files: string[],
): { threshold: Threshold | null; priority: Threshold | null } {
  if (o.triage !== undefined && !TRIAGE_MODES.includes(o.triage)) {
    throw usageError(`--triage must be one of ${TRIAGE_MODES.join(', ')}, not ${o.triage}`);
  }
  const threshold = thresholdOf('--fail-on', o.failOn);
  const priority = thresholdOf('--fail-on-priority', o.failOnPriority);
  if (o.failOnAll && threshold === null && priority === null) {
    throw usageError('--fail-on-all needs --fail-on LEVEL or --fail-on-priority LEVEL');
  }
  if (o.sarifOut !== undefined && files.length !== 1) {
    throw usageError('--sarif-out writes the cases of one scan: upload one file with it');
  }
  if (o.timeout !== undefined && !/^\d+$/.test(o.timeout)) throw usageError('--timeout takes whole seconds');
  return { threshold, priority };
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
  const { threshold, priority } = checkOptions(o, files);
  const sizes = await Promise.all(
    files.map(async (f) => {
      const s = await stat(f).catch(() => null);
      if (!s?.isFile()) throw usageError(`${f}: no such file`);
      return s.size;
    }),
  );
  const wait = o.wait === true || threshold !== null || priority !== null || o.sarifOut !== undefined;
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
      // Sent only when turned off, so the default upload's query (and Idempotency-Key) is unchanged.
      ...(o.resolveMissing === false ? { resolveMissing: false } : {}),
      triage: o.triage,
    };
    const bar = uploadBar(ctx.bars, label, sizes[i]!);
    let accepted: ScanAccepted;
    try {
      // The SDK's default key: the file's SHA-256 and these options (docs/cli.md#scan-upload).
      accepted = await uploadScan(ctx.client.sdk, {
        source: file,
        query: scanOptions as UploadQuery,
        gzip: o.gzip === true,
        onBytes: (sent) => bar.update(sent),
        ...(o.idempotencyKey ? { idempotencyKey: o.idempotencyKey } : {}),
      });
    } catch (err) {
      const cliError = toCliError(err);
      if (triageUnsupported(cliError)) {
        throw new CliError(
          `This server does not support --triage yet (it refused the triage parameter): upload without --triage.\n${cliError.message}`,
          EXIT.usage,
          cliError.problem,
        );
      }
      throw toCliError(cliError, `${file}: `);
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
      ...(priority !== null ? { failOnPriority: null } : {}),
      ...(o.sarifOut !== undefined ? { sarif: null } : {}),
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
    const scope = o.failOnAll ? 'all' : 'new';
    if (threshold !== null) {
      const cases = await countFailing(
        ctx.client,
        scan.scanId,
        { field: 'severity', threshold },
        scope === 'all',
      );
      result.failOn = { threshold, scope, cases };
      if (cases > 0 && exit === EXIT.ok) exit = EXIT.threshold;
    }
    if (priority !== null) {
      const cases = await countFailing(
        ctx.client,
        scan.scanId,
        { field: 'priority', threshold: priority },
        scope === 'all',
      );
      result.failOnPriority = { threshold: priority, scope, cases };
      if (cases > 0 && exit === EXIT.ok) exit = EXIT.threshold;
    }
    if (o.sarifOut !== undefined) {
      // The server's own SARIF export of the scan's actionable cases (docs/exports.md).
      await exportCases(ctx, {
        format: 'sarif',
        scan: scan.scanId,
        status: 'open,in_progress',
        output: o.sarifOut,
      });
      result.sarif = o.sarifOut;
    }
  }

  if (ctx.json) ctx.print(JSON.stringify({ scans: results, exitCode: exit }, null, 2));
  else if (!ctx.quiet) printScanSummary(ctx, results, wait);
  return exit;
}
