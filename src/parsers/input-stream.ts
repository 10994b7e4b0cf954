import { Readable, pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { unparseable } from './parse-error.js';

/** Anything we can pull bytes from: a Node Readable or any async iterable of Buffers/strings. */
export type ByteSource = Readable | AsyncIterable<Buffer | Uint8Array | string>;

async function* asBuffers(source: ByteSource): AsyncGenerator<Buffer, void, undefined> {
  for await (const chunk of source as AsyncIterable<Buffer | Uint8Array | string>) {
    yield typeof chunk === 'string'
      ? Buffer.from(chunk, 'utf8')
      : Buffer.isBuffer(chunk)
        ? chunk
        : Buffer.from(chunk);
  }
}

/**
 * A pull-based view of the input with one-time look-ahead, so detection can peek at the head and
 * the parser still sees every byte. Nothing is read until someone pulls.
 */
export class PeekableInput {
  private readonly head: Buffer[] = [];
  private iterator: AsyncIterator<Buffer>;
  private done = false;
  /** Bytes handed to the parser so far. */
  bytes = 0;

  constructor(source: ByteSource) {
    this.iterator = asBuffers(source)[Symbol.asyncIterator]();
  }

  /** Reads until at least `n` bytes are buffered or the input ends; returns the buffered head. */
  async peek(n: number): Promise<Buffer> {
    let have = this.head.reduce((s, b) => s + b.length, 0);
    while (have < n && !this.done) {
      const r = await this.iterator.next();
      if (r.done) this.done = true;
      else {
        this.head.push(r.value);
        have += r.value.length;
      }
    }
    return Buffer.concat(this.head);
  }

  /**
   * Replaces the input by its gunzipped form (`Content-Encoding: gzip` or a .gz upload). Must be
   * called before {@link chunks}; the head already peeked is fed to the decompressor first.
   */
  gunzip(): void {
    const compressed = this.drainFrom();
    const gunzip = createGunzip();
    pipeline(Readable.from(compressed), gunzip, () => undefined);
    const errors = (async function* () {
      try {
        for await (const b of gunzip as AsyncIterable<Buffer>) yield b;
      } catch {
        throw unparseable('The gzip-compressed upload is corrupt or truncated.');
      }
    })();
    this.done = false;
    this.iterator = errors[Symbol.asyncIterator]();
  }

  /** The whole input, head first, counting bytes. Single use. */
  async *chunks(): AsyncGenerator<Buffer, void, undefined> {
    for await (const b of this.drainFrom()) {
      this.bytes += b.length;
      yield b;
    }
  }

  /** Captures the look-ahead state now; the returned generator replays the head then the rest. */
  private drainFrom(): AsyncGenerator<Buffer, void, undefined> {
    const head = this.head.splice(0);
    return replay(head, this.iterator, this.done);
  }
}

async function* replay(
  head: Buffer[],
  rest: AsyncIterator<Buffer>,
  restDone: boolean,
): AsyncGenerator<Buffer, void, undefined> {
  yield* head;
  if (restDone) return;
  try {
    for (;;) {
      const r = await rest.next();
      if (r.done) return;
      yield r.value;
    }
  } finally {
    // Early exit (consumer stopped or parse failed): let the source release its file handle.
    await rest.return?.();
  }
}

/** Replays a chunk that was taken to look at, then the rest of the input. */
export async function* prependChunk(
  first: Buffer | null,
  rest: AsyncIterator<Buffer>,
): AsyncGenerator<Buffer, void, undefined> {
  if (first) yield first;
  for (;;) {
    const r = await rest.next();
    if (r.done) return;
    yield r.value;
  }
}
