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

function bar(format: string, total: number, payload: Record<string, string>): cliProgress.SingleBar {
  const b = new cliProgress.SingleBar(
    {
      format,
      stream: process.stderr,
      hideCursor: true,
      barsize: 30,
      fps: 8,
      etaBuffer: 40,
      etaAsynchronousUpdate: true,
      formatValue: (v, _o, type) => (type === 'value' || type === 'total' ? formatBytes(v) : String(v)),
    },
    cliProgress.Presets.shades_classic,
  );
  b.start(Math.max(1, total), 0, payload);
  return b;
}

/** Upload bar: bytes sent of the file, rate and ETA. */
export function uploadBar(enabled: boolean, label: string, total: number): Bar {
  if (!enabled) return NO_BAR;
  const b = bar(
    'Uploading {label} [{bar}] {percentage}% | {value}/{total} | {rate} | ETA {eta_formatted}',
    total,
    {
      label,
      rate: '-',
    },
  );
  const started = Date.now();
  return {
    update(value) {
      const seconds = (Date.now() - started) / 1000;
      b.update(value, { rate: seconds > 0 ? `${formatBytes(value / seconds)}/s` : '-' });
    },
    stop: () => b.stop(),
  };
}

/** Parse bar: bytes parsed of the stored (decompressed) file and findings stored so far. */
export function parseBar(enabled: boolean, label: string, total: number): Bar {
  if (!enabled) return NO_BAR;
  const b = bar(
    'Parsing   {label} [{bar}] {percentage}% | {value}/{total} | {findings} findings | ETA {eta_formatted}',
    total,
    {
      label,
      findings: '0',
    },
  );
  return {
    update(value, payload) {
      b.update(value, payload);
    },
    stop: () => b.stop(),
  };
}
