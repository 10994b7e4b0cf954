import { AppError } from '../../lib/errors.js';

/**
 * How many uploads a process reads at once, per workspace and in all (docs/ingestion.md#upload-bounds): each one
 * holds a connection, a descriptor and a growing file, so a client cannot hold hundreds.
 * Counted per process: N web processes take at most N times the numbers.
 */
export interface UploadGate {
  /**
   * Takes a place for an upload of `workspaceId`, or throws: 429 `rate_limited` past the
   * workspace's share, 503 `overloaded` past the process's; both with `Retry-After`.
   * Returns the function that gives the place back (safe to call more than once).
   */
  enter(workspaceId: string): () => void;
  /** Uploads in progress (for tests and metrics). */
  readonly active: number;
}

export function createUploadGate(limits: { perWorkspace: number; maxConcurrent: number }): UploadGate {
  const byWorkspace = new Map<string, number>();
  let active = 0;
  return {
    get active() {
      return active;
    },
    enter(workspaceId) {
      const mine = byWorkspace.get(workspaceId) ?? 0;
      if (mine >= limits.perWorkspace) {
        throw new AppError(
          'rate_limited',
          `This workspace already has ${limits.perWorkspace} uploads in progress; wait for one to finish.`,
          { headers: { 'Retry-After': '5' } },
        );
      }
      if (active >= limits.maxConcurrent) {
        throw new AppError(
          'overloaded',
          'The service is receiving too many uploads right now; retry shortly.',
          {
            headers: { 'Retry-After': '5' },
          },
        );
      }
      byWorkspace.set(workspaceId, mine + 1);
      active++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        active--;
        const n = (byWorkspace.get(workspaceId) ?? 1) - 1;
        if (n <= 0) byWorkspace.delete(workspaceId);
        else byWorkspace.set(workspaceId, n);
      };
    },
  };
}

/**
 * Refuses an upload before any byte is accepted when storage would keep less than `minFree`
 * bytes free after it (`declared`: its Content-Length, when sent). 503 `overloaded`: the disk
 * is the operator's to fix, and the client may retry later.
 */
export function checkFreeSpace(free: number | null, declared: number | null, minFree: number): void {
  if (free === null) return;
  if (free - (declared ?? 0) >= minFree) return;
  throw new AppError('overloaded', 'Scan storage is too full to accept this upload right now; retry later.', {
    headers: { 'Retry-After': '60' },
  });
}
