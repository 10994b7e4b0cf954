/**
 * A copy of `s` that does not keep the input chunk it was cut from alive: V8 slices substrings
 * of long strings, so a kept 20-character host name can pin the whole 64 KiB chunk the tokenizer
 * cut it from. Whatever a parser keeps beyond the current record (the scope's hosts, the
 * CycloneDX component index) is copied with this.
 */
export function ownString(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}

/** {@link ownString} of a string that may be absent. */
export const ownOrNull = (s: string | null): string | null => (s === null ? null : ownString(s));
