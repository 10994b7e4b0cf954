import type { MessagePort } from 'node:worker_threads';

/**
 * Bytes of a stored file carried into a parser thread over a MessagePort, for storage that
 * has no local path (object storage): the file streams from the store through the main thread
 * into the parser, and at most one chunk is in flight, so memory stays flat whatever the size.
 *
 * Protocol (plain objects only):
 *   thread → main  { type: 'pull' }                       wants the next chunk
 *   main → thread  { type: 'chunk', data: ArrayBuffer }   the chunk (transferred, not copied)
 *   main → thread  { type: 'end' }                        no more bytes
 *   main → thread  { type: 'error', message }             the store failed mid-file
 * Either side may close the port; the thread closes it when the parse ends or stops early.
 */
type ToThread = { type: 'chunk'; data: ArrayBuffer } | { type: 'end' } | { type: 'error'; message: string };

/** The thread's side: the port as an async iterable of Buffers. */
export async function* readBytePort(port: MessagePort): AsyncGenerator<Buffer> {
  let pending: ((msg: ToThread) => void) | null = null;
  const queue: ToThread[] = [];
  port.on('message', (msg: ToThread) => {
    if (pending) {
      const resolve = pending;
      pending = null;
      resolve(msg);
    } else queue.push(msg);
  });
  try {
    for (;;) {
      port.postMessage({ type: 'pull' });
      const msg = queue.shift() ?? (await new Promise<ToThread>((resolve) => (pending = resolve)));
      if (msg.type === 'end') return;
      if (msg.type === 'error')
        throw Object.assign(new Error(`reading the stored scan failed: ${msg.message}`), {
          code: 'STORAGE_READ',
        });
      yield Buffer.from(msg.data);
    }
  } finally {
    port.close();
  }
}

/**
 * The main thread's side: answers the thread's pulls from `source`, one chunk a pull. Resolves
 * when the source ended or the thread closed the port; a source error is passed to the thread
 * (the parse then fails and the job is retried) and also rejects.
 */
export function serveBytePort(port: MessagePort, source: AsyncIterable<Buffer | Uint8Array>): Promise<void> {
  const iterator = source[Symbol.asyncIterator]();
  return new Promise<void>((resolve, reject) => {
    let busy = false;
    let finished = false;
    const finish = (err?: unknown) => {
      if (finished) return;
      finished = true;
      port.close();
      void iterator.return?.();
      if (err === undefined) resolve();
      else reject(err instanceof Error ? err : new Error(String(err)));
    };
    port.on('close', () => finish());
    port.on('message', (msg: { type: 'pull' }) => {
      if (msg.type !== 'pull' || busy || finished) return;
      busy = true;
      iterator.next().then(
        (r) => {
          busy = false;
          if (finished) return;
          if (r.done) {
            port.postMessage({ type: 'end' });
            return;
          }
          // A private copy of the chunk's bytes, so the transfer cannot detach a pooled buffer.
          const data = new Uint8Array(r.value).buffer;
          port.postMessage({ type: 'chunk', data }, [data]);
        },
        (err: unknown) => {
          busy = false;
          if (!finished) port.postMessage({ type: 'error', message: (err as Error)?.message ?? 'error' });
          finish(err);
        },
      );
    });
  });
}
