import { isScanFinished, waitForScan as waitForScanToEnd } from '@vuln-triage/sdk';
import { toCliError } from './errors.js';
import type { ApiClient } from './http-client.js';
import { formatCount } from './output.js';
import { parseBar, type Bar } from './progress.js';

/** `GET /api/pipeline/scan/:id` as the README documents it (the fields this client reads). */
export interface ScanStatus {
  scanId: string;
  name: string | null;
  status: 'queued' | 'parsing' | 'completed' | 'failed';
  format: string | null;
  bytes: number;
  bytesParsed: number;
  progress: number;
  counts: {
    findings: number;
    new: number | null;
    duplicate: number | null;
    bySeverity: Record<string, number>;
  };
  error: { code?: string; message?: string; line?: number | null; column?: number | null } | null;
  notes?: unknown;
  /** Present when the upload asked the server to triage (`--triage new|all`): its progress, then counts by priority. */
  triage?: ({ status?: string; byPriority?: Record<string, number> } & Record<string, unknown>) | null;
}

/** Failed, or completed with the triage it asked for finished too (a summary by priority needs it). */
export const isFinished = (s: ScanStatus): boolean =>
  isScanFinished(s as Parameters<typeof isScanFinished>[0]);

/**
 * Why a scan failed, with the line and column the parser stopped at when it knows them. The
 * parsers' messages usually name the place already ("… (line 22, column 5)."), so the location
 * is added only to a message that does not.
 */
export function failureReason(s: ScanStatus): string {
  const e = s.error ?? {};
  const message = e.message ?? 'the scan failed';
  const hasLine = e.line !== undefined && e.line !== null;
  const where =
    hasLine && !new RegExp(`\\bline ${e.line}\\b`).test(message)
      ? ` at line ${e.line}${e.column !== undefined && e.column !== null ? `, column ${e.column}` : ''}`
      : '';
  return `${message}${where}${e.code ? ` [${e.code}]` : ''}`;
}

export interface WaitOptions {
  /** Between polls. @defaultValue 1000 */
  pollMs: number;
  /** Give up (exit 4) after this long; the scan goes on on the server. */
  timeoutMs: number;
  bars: boolean;
  label: string;
}

/**
 * Polls the scan until it is completed or failed (the SDK's `waitForScan`), drawing the parse
 * bar (bytes parsed of the stored file, findings stored so far) while it runs.
 */
export async function waitForScan(client: ApiClient, scanId: string, opts: WaitOptions): Promise<ScanStatus> {
  let bar: Bar | null = null;
  try {
    const scan = await waitForScanToEnd(client.sdk, scanId, {
      pollMs: opts.pollMs,
      timeoutMs: opts.timeoutMs,
      onStatus: (s) => {
        bar ??= parseBar(opts.bars, opts.label, s.bytes);
        bar.update(s.status === 'completed' ? s.bytes : s.bytesParsed, {
          findings: formatCount(s.counts.findings),
        });
      },
    });
    return scan as unknown as ScanStatus;
  } catch (err) {
    throw toCliError(err);
  } finally {
    (bar as Bar | null)?.stop();
  }
}
