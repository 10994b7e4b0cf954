import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';

/** SHA-256 of a file, streamed (a 2 GiB scan is never held in memory), as lowercase hex. */
export async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/**
 * The `Idempotency-Key` of an upload: a hash of the file's SHA-256 and the options that shape
 * the scan (name, format, asset context, triage), so a re-run of the same CI job with the same
 * file gets the first scan back instead of a second one, while the same file uploaded for
 * another asset is another scan. Transport details (gzip) are left out: the server hashes the
 * decompressed bytes, so a gzipped re-run is the same request. 68 visible ASCII characters,
 * within the server's 1 to 255.
 */
export function idempotencyKeyFor(fileSha256Hex: string, options: Record<string, unknown>): string {
  const canonical = Object.keys(options)
    .filter((k) => options[k] !== undefined)
    .sort()
    .map((k) => [k, options[k]]);
  const digest = createHash('sha256')
    .update(`${fileSha256Hex}\n${JSON.stringify(canonical)}`)
    .digest('hex');
  return `vt1-${digest}`;
}
