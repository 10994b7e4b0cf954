import type { Db } from '../../db/pool.js';
import { selectedCaseCandidates } from './case-batch-store.js';
import type { CaseRisk } from './case-risk.js';
import type { CaseSelection } from './case-triage.js';

/**
 * The cases a triage selection names, bound once to the pool, so the console's triage preview
 * counts them without seeing the pool. The same query the case triage service selects with.
 */
export interface CaseSelectionService {
  /** At most `max + 1` cases of the workspace the selection names ({@link selectedCaseCandidates}). */
  candidates(workspaceId: string, selection: CaseSelection, max: number): Promise<CaseRisk[]>;
}

/** {@link CaseSelectionService} over `db`: plain delegation. */
export function createCaseSelectionService(db: Db): CaseSelectionService {
  return {
    candidates: (workspaceId, selection, max) => selectedCaseCandidates(db, workspaceId, selection, max),
  };
}
