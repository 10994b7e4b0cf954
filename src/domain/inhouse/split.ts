import { sha256Hex } from './canonical-json.js';

/**
 * The deterministic validation slice: a CVE is held out when the first 32 bits of the
 * SHA-256 of its id, modulo 100, fall below `percent`. Keyed on the id alone, so a CVE
 * stays on the same side in any file and any row order.
 */
export function isHeldOut(cve: string, percent: number): boolean {
  return parseInt(sha256Hex(cve).slice(0, 8), 16) % 100 < percent;
}

export function splitByCve<T extends { cve: string }>(
  rows: readonly T[],
  percent: number,
): { train: T[]; validation: T[] } {
  const train: T[] = [];
  const validation: T[] = [];
  for (const row of rows) (isHeldOut(row.cve, percent) ? validation : train).push(row);
  return { train, validation };
}

/** Year and sequence number of a CVE id, compared as numbers (`CVE-2024-9999` before `CVE-2024-10000`). */
export function cveOrder(cve: string): [year: number, number: number] {
  const m = /^CVE-(\d{4})-(\d+)$/.exec(cve);
  if (!m) throw new Error(`not a CVE id: ${cve}`);
  return [Number(m[1]), Number(m[2])];
}

/**
 * The time-ordered split: rows ordered by CVE year, then number; the newest `percent` of them
 * (rounded down) are scored, the older ones trained on. A random split lets a model learn from
 * CVEs published after the ones it is scored on; this one asks what it would have said about
 * CVEs newer than everything it saw, as in production.
 */
export function splitByTime<T extends { cve: string }>(
  rows: readonly T[],
  percent: number,
): { train: T[]; validation: T[] } {
  const ordered = rows
    .map((row) => ({ row, key: cveOrder(row.cve) }))
    .sort((a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1])
    .map(({ row }) => row);
  const cut = ordered.length - Math.floor((ordered.length * percent) / 100);
  return { train: ordered.slice(0, cut), validation: ordered.slice(cut) };
}

/**
 * The scored rows whose description does not appear verbatim (after trimming) in the trained-on
 * rows. Vendor templates repeat whole descriptions across CVEs, so a model can score well on
 * them by remembering the template; these rows show what it does on text it has not seen.
 */
export function withoutVerbatimDescriptions<T extends { description: string }>(
  scored: readonly T[],
  trained: readonly { description: string }[],
): T[] {
  const seen = new Set(trained.map((row) => row.description.trim()));
  return scored.filter((row) => !seen.has(row.description.trim()));
}
