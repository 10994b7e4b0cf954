import type { Db } from '../../db/pool.js';
import { AppError } from '../../lib/errors.js';
import { selectedCaseCandidates, type CaseRisk, type CaseSelection } from './case-candidates.js';
import type { ListFilters } from './list-filters.js';

/** Largest selection `POST /api/v1/cases/triage` takes (the service plan's monthly AI calls). */
export const CASE_SELECTION_MAX = 50_000;

/**
 * The selection of a `POST /api/v1/cases/triage` body: `caseIds`, or the list filters (of
 * which `named` says which the body gave). Both at once is a 400 naming each filter.
 */
export function caseSelectionOf(
  caseIds: readonly string[] | undefined,
  filters: ListFilters,
  named: readonly string[],
): CaseSelection {
  if (caseIds === undefined) return { filters };
  if (named.length > 0) {
    throw new AppError('invalid_request', 'Select cases by caseIds or by filters, not both.', {
      errors: named.map((k) => ({ path: `/${k}`, message: 'must not be given with caseIds' })),
    });
  }
  return { caseIds };
}

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
