import cliProgress from 'cli-progress';
import { formatBytes } from './output.js';

/**
 * Progress bars on stderr, so stdout stays clean for tables and `--json`. Shown only when both
 * stdout and stderr are terminals and neither `--json` nor `--quiet` was given: a CI log gets
 * no bars (and no escape codes) at all.
 */
export interface Bar {
  update(value: number, payload?: Record<string, string>): void;
  stop(): void;
}

const NO_BAR: Bar = { update: () => undefined, stop: () => undefined };

export function barsEnabled(
  opts: { json?: boolean; quiet?: boolean },
  out: { isTTY?: boolean } = process.stdout,
  err: { isTTY?: boolean } = process.stderr,
): boolean {
  return !opts.json && !opts.quiet && out.isTTY === true && err.isTTY === true;
}

/** `75` → `1m15s`; unknown (no progress yet) → `-`. */
export function formatEta(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '-';
  const s = Math.ceil(seconds);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/**
 * A byte bar whose rate and ETA are measured here, from the bytes done since the bar started
 * (cli-progress's own ETA prints `INF`/`NULL` fragments before the first step and after the last).
 */
function byteBar(format: string, total: number, payload: Record<string, string>): Bar {
  const b = new cliProgress.SingleBar(
    {
      format,
      stream: process.stderr,
      hideCursor: true,
      barsize: 30,
      fps: 8,
      formatValue: (v, _o, type) => (type === 'value' || type === 'total' ? formatBytes(v) : String(v)),
    },
    cliProgress.Presets.shades_classic,
  );
  const size = Math.max(1, total);
  b.start(size, 0, { ...payload, rate: '-', remaining: '-' });
  const started = Date.now();
  return {
    update(value, extra = {}) {
      const seconds = (Date.now() - started) / 1000;
      const rate = seconds > 0 ? value / seconds : 0;
      b.update(value, {
        ...extra,
        rate: rate > 0 ? `${formatBytes(rate)}/s` : '-',
        remaining: value >= size ? '0s' : rate > 0 ? formatEta((size - value) / rate) : '-',
      });
    },
    stop: () => b.stop(),
  };
}

/** Upload bar: bytes sent of the file, rate and ETA. */
export function uploadBar(enabled: boolean, label: string, total: number): Bar {
  if (!enabled) return NO_BAR;
  return byteBar(
    'Uploading {label} [{bar}] {percentage}% | {value}/{total} | {rate} | ETA {remaining}',
    total,
    {
      label,
    },
  );
}

/** Parse bar: bytes parsed of the stored (decompressed) file, findings stored so far, ETA. */
export function parseBar(enabled: boolean, label: string, total: number): Bar {
  if (!enabled) return NO_BAR;
  return byteBar(
    'Parsing   {label} [{bar}] {percentage}% | {value}/{total} | {findings} findings | ETA {remaining}',
    total,
    {
      label,
      findings: '0',
    },
  );
}

/** A count bar (e.g. cases written by an export job of its total); the total may arrive late. */
export interface CountBar {
  update(value: number, total: number): void;
  stop(): void;
}

export function countBar(enabled: boolean, label: string, unit: string): CountBar {
  if (!enabled) return { update: () => undefined, stop: () => undefined };
  const b = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit}`,
      hideCursor: true,
      barsize: 30,
      fps: 8,
    },
    cliProgress.Presets.shades_classic,
  );
  b.start(1, 0);
  return {
    update(value, total) {
      if (total > 0) b.setTotal(total);
      b.update(value);
    },
    stop: () => b.stop(),
  };
}
