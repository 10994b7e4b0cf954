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
