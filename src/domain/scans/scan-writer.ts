import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type pg from 'pg';
import { withTransaction, type Pool } from '../../db/pool.js';
import { sql } from '../../db/sql.js';
import { isUuid } from '../../lib/ids.js';
import type { Finding } from '../../parsers/index.js';
import { FINDING_COPY_COLUMNS, findingRow, uuidV7, type RowScan } from './finding-copy.js';
import { deleteStoredRows, storedRecordRange } from './ingest-store.js';

/** Options of {@link openScanWriter}. */
export interface ScanWriterOptions {
  /** Encoded batches waiting for the database before `write` makes the parser wait. @defaultValue 2 */
  maxQueued?: number;
  /** Queued batches committed together when the database falls behind. @defaultValue 2 */
  maxBatchesPerCommit?: number;
}

/** Writes one scan's findings (each with its evidence); see {@link openScanWriter}. */
export interface ScanWriter {
  /** The first record index not stored yet when the writer opened; lower ones are skipped. */
  readonly resumeAt: number;
  /**
   * Encodes a batch and queues it; resolves once the queue has room (the parser's backpressure).
   * Rejects with the error of an earlier commit, if one failed.
   */
  write(batch: Finding[], bytesRead: number | null): Promise<void>;
  /** Commits everything queued; resolves to the number of findings this writer stored. */
  flush(): Promise<number>;
  /** Releases the connection; after a failure it is discarded rather than reused. */
  close(): Promise<void>;
}

interface Encoded {
  findings: Buffer[];
  count: number;
  next: number;
  bytesRead: number | null;
}

/** Characters per chunk of encoded rows. */
const CHUNK_CHARS = 32_768;

/**
 * Rows encoded into UTF-8 buffers of about {@link CHUNK_CHARS} characters as they are made.
 * Batches wait for their commit long enough for V8 to promote what they hold to the old
 * generation, which only a full collection frees: kept as strings (megabytes per batch), dead
 * batches grew the main thread's heap to hundreds of MiB. As buffers, in-flight rows live
 * outside the heap, and the strings that made them die young.
 */
class EncodedRows {
  private readonly chunks: Buffer[] = [];
  private current = '';

  add(row: string): void {
    this.current += row;
    if (this.current.length >= CHUNK_CHARS) {
      this.chunks.push(Buffer.from(this.current));
      this.current = '';
    }
  }

  done(): Buffer[] {
    if (this.current.length > 0) this.chunks.push(Buffer.from(this.current));
    return this.chunks;
  }
}

/**
 * Opens the write path of one scan on one dedicated connection (docs/ingestion.md#upload, docs/cases.md).
 *
 * Each commit COPYs rows straight into `findings` (ids made here; each row carries its evidence,
 * m020) and records progress, in one transaction. While the database commits,
 * the next batches are encoded: parsing, encoding and writing overlap.
 *
 * Idempotency without ON CONFLICT: a scan's batches are committed in record order, so its
 * stored rows are always a prefix `[0, n)` of the parser's output (a database crash loses a
 * suffix of commits, never a middle). A retried job therefore resumes at `n` and skips what is
 * stored. `UNIQUE (scan_id, record_index)` still holds: two attempts racing on one scan make
 * one COPY fail and that attempt retry, and never store a record twice. If the rows are somehow
 * not a prefix, they are deleted and the scan is written again from record 0.
 *
 * Asset context (docs/ingestion.md#asset-context): `scan.uploadAsset` is the asset the upload named; findings
 * without a host of their own are labelled with it (their fingerprint already includes it: the
 * parser computed it, see `ParseScanOptions.uploadAsset`).
 */
export async function openScanWriter(
  pool: Pool,
  scan: RowScan,
  options: ScanWriterOptions = {},
): Promise<ScanWriter> {
  const maxQueued = Math.max(1, options.maxQueued ?? 2);
  const maxPerCommit = Math.max(1, options.maxBatchesPerCommit ?? 2);
  // The commit's first statement carries the scan id as a literal: it must be a uuid.
  if (!isUuid(scan.id)) throw new Error(`not a scan id: ${scan.id}`);
  const client = await pool.connect();
  let broken = false;
  let resumeAt: number;
  try {
    resumeAt = await storedPrefix(client, scan.id);
  } catch (err) {
    client.release(true);
    throw err;
  }

  const queue: Encoded[] = [];
  let stored = 0;
  let failure: unknown = null;
  let running: Promise<void> | null = null;
  let wake: (() => void) | null = null;
  const signal = () => {
    const w = wake;
    wake = null;
    w?.();
  };

  async function commit(chunk: Encoded[]): Promise<void> {
    const last = chunk[chunk.length - 1]!;
    // Round trips are what a busy machine makes expensive (each waits for both processes to be
    // scheduled), so a commit takes three: BEGIN with its prelude (the progress UPDATE, one simple
    // query, its values literals checked above), the COPY, and COMMIT. The COPY stream runs
    // on the writer's own connection: the transaction must be on it too. On an error
    // withTransaction rolls back, and the writer is broken from then on (its connection is
    // discarded on close).
    // synchronous_commit off is safe: a commit lost to a database crash is a suffix the retried
    // job writes again, and completeScan's synchronous commit flushes all of them.
    const progress = `SET LOCAL synchronous_commit = off;
       UPDATE scans SET findings_count = greatest(findings_count, ${last.next}),
                        bytes_parsed = ${last.bytesRead === null ? 'bytes_parsed' : `least(bytes, greatest(bytes_parsed, ${last.bytesRead}))`}
       WHERE id = '${scan.id}' AND status = 'parsing'`;
    await withTransaction(
      client,
      async (tx, [, updated]) => {
        // No foreign key checks the rows' scan (m017): the UPDATE holds the scan row until the
        // commit, so a concurrent delete waits and then removes these rows with it, and a scan
        // already deleted fails the batch (the retried job then finds nothing to parse).
        if (updated!.rowCount === 0) {
          const held = await tx.query(sql`SELECT 1 FROM scans WHERE id = ${scan.id} FOR KEY SHARE`);
          if (held.rowCount === 0) throw new Error(`scan ${scan.id} no longer exists`);
        }
        await pipeline(
          Readable.from(chunk.flatMap((c) => c.findings)),
          tx.query(copyFrom(`COPY findings (${FINDING_COPY_COLUMNS}) FROM STDIN`)),
        );
      },
      { prelude: progress },
    );
    for (const c of chunk) stored += c.count;
  }

  async function drain(): Promise<void> {
    try {
      while (queue.length > 0 && failure === null) {
        const chunk = queue.splice(0, maxPerCommit);
        signal();
        await commit(chunk);
      }
    } catch (err) {
      failure = err;
      broken = true;
    } finally {
      running = null;
      signal();
    }
  }

  return {
    resumeAt,
    async write(batch, bytesRead) {
      if (failure !== null) throw failure;
      const fresh =
        batch[0] && batch[0].recordIndex >= resumeAt ? batch : batch.filter((f) => f.recordIndex >= resumeAt);
      if (fresh.length === 0) return;
      const findings = new EncodedRows();
      for (const f of fresh) findings.add(findingRow(uuidV7(), scan, f));
      queue.push({
        findings: findings.done(),
        count: fresh.length,
        // Integers only: both end up as literals in the commit's first statement.
        next: Math.trunc(fresh[fresh.length - 1]!.recordIndex) + 1,
        bytesRead: bytesRead !== null && Number.isSafeInteger(bytesRead) ? bytesRead : null,
      });
      running ??= drain();
      while (queue.length > maxQueued && failure === null)
        await new Promise<void>((resolve) => (wake = resolve));
      if (failure !== null) throw failure;
    },
    async flush() {
      while (running !== null) await running;
      if (failure !== null) throw failure;
      return stored;
    },
    async close() {
      while (running !== null) await running;
      client.release(broken || undefined);
    },
  };
}

/**
 * Where this scan's stored rows end. They form a prefix of the record indexes (see
 * {@link openScanWriter}); when they do not, they are deleted so the scan is written afresh.
 */
async function storedPrefix(client: pg.PoolClient, scanId: string): Promise<number> {
  const { count, next } = await storedRecordRange(client, scanId);
  if (count === next) return next;
  await withTransaction(client, (tx) => deleteStoredRows(tx, scanId));
  return 0;
}
