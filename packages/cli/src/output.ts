/**
 * Terminal output: colours only on a TTY and never with `NO_COLOR` (https://no-color.org: set
 * and not empty), plain aligned tables, byte sizes and problem documents as sentences.
 */

const ESC = '\u001b[';

/** Colour functions; the identity when colours are off. */
export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
  green(s: string): string;
  severity(level: string): string;
}

/** Whether `stream` may carry colours: it is a terminal and `NO_COLOR` is unset or empty. */
export function colourEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

export function makeStyle(enabled: boolean): Style {
  const wrap = (open: string, close: string) => (s: string) =>
    enabled ? `${ESC}${open}m${s}${ESC}${close}m` : s;
  const bold = wrap('1', '22');
  const red = wrap('31', '39');
  const yellow = wrap('33', '39');
  const style: Style = {
    bold,
    dim: wrap('2', '22'),
    red,
    yellow,
    green: wrap('32', '39'),
    severity(level) {
      if (level === 'CRITICAL') return bold(red(level));
      if (level === 'HIGH') return red(level);
      if (level === 'MEDIUM') return yellow(level);
      return level;
    },
  };
  return style;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;
const visibleWidth = (s: string): number => s.replace(ANSI, '').length;

/**
 * A table with a header row and columns padded to their widest cell; `right` names the
 * columns aligned right (numbers). Cells may carry colours: widths ignore escape codes.
 */
export function table(headers: string[], rows: string[][], right: number[] = []): string {
  const widths = headers.map((h, i) =>
    Math.max(visibleWidth(h), ...rows.map((r) => visibleWidth(r[i] ?? ''))),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => {
        const pad = ' '.repeat(Math.max(0, widths[i]! - visibleWidth(c)));
        return right.includes(i) ? pad + c : c + pad;
      })
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** Two columns, label and value, for one record (a triage answer, a usage report). */
export function details(pairs: [string, string][]): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** `1536` → `1.5 KiB`. */
export function formatBytes(n: number): string {
  let v = n;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : 1)} ${UNITS[u]}`;
}

export const formatCount = (n: number): string => n.toLocaleString('en-US');

/** Cuts `s` to `max` characters with an ellipsis. */
export const truncate = (s: string, max: number): string => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);

/** A problem document as the lines a person reads (the SDK's errors read the same). */
export { describeProblem } from '@vuln-triage/sdk';
