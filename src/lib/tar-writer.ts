import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

/**
 * A gzip-compressed POSIX ustar archive of files already on disk, streamed: one 512-byte header
 * per member, its bytes, zero padding to a 512-byte block, two zero blocks at the end. Members
 * are written from files so their sizes are known before their headers (tar needs them first).
 * Names must be plain ASCII of at most 100 bytes; modes 0644; no directories or links.
 */
export function tarGzFiles(members: readonly { name: string; file: string }[], mtime: Date): Readable {
  const out = new PassThrough();
  const gzip = createGzip();
  void (async () => {
    const raw = new PassThrough();
    const done = pipeline(raw, gzip, out);
    try {
      for (const m of members) {
        const { size } = await stat(m.file);
        raw.write(header(m.name, size, mtime));
        for await (const chunk of createReadStream(m.file)) {
          if (!raw.write(chunk)) await new Promise((r) => raw.once('drain', r));
        }
        const pad = (512 - (size % 512)) % 512;
        if (pad) raw.write(Buffer.alloc(pad));
      }
      raw.end(Buffer.alloc(1024));
      await done;
    } catch (err) {
      raw.destroy(err as Error);
      out.destroy(err as Error);
    }
  })();
  return out;
}

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

/** One ustar header block. */
export function header(name: string, size: number, mtime: Date): Buffer {
  if (!/^[\x21-\x7e]{1,100}$/.test(name)) throw new Error(`tar member name not allowed: ${name}`);
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, 'ascii');
  h.write(octal(0o644, 8), 100, 8, 'ascii');
  h.write(octal(0, 8), 108, 8, 'ascii');
  h.write(octal(0, 8), 116, 8, 'ascii');
  h.write(octal(size, 12), 124, 12, 'ascii');
  h.write(octal(Math.floor(mtime.getTime() / 1000), 12), 136, 12, 'ascii');
  h.write('        ', 148, 8, 'ascii');
  h.write('0', 156, 1, 'ascii');
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii');
  return h;
}
