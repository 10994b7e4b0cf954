/** Value formats shared by the feed parsers. */

/** CVE-YYYY-NNNN with four or more sequence digits (the CVE id syntax since 2014), any case. */
export const CVE_ID = /^CVE-\d{4}-\d{4,}$/i;

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar date as YYYY-MM-DD that actually exists (2024-02-30 does not). */
export function isIsoDate(value: string): boolean {
  const m = ISO_DATE.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === value;
}
