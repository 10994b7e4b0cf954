import type { ScanScope } from '../../parsers/index.js';
import { MAX_SCOPE_HOSTS } from '../../parsers/index.js';
import type { ScanScopeKeys } from '../cases/case-scope.js';

/**
 * What a completing scan resolves (docs/ingestion.md#rescans), from its parse's scope and its
 * upload: the scanners and hosts the file covered and, for findings without a host, the upload's
 * `asset=` or else the one subject the file names. Plain function; the notes say why a scan
 * resolves nothing or less than it could.
 */
export interface RescanPlan {
  /** The scope of the scan's hostless findings (`asset:<name>`, `subject:<name>`), or null. */
  hostless: string | null;
  /** What it covered, for the lock and the resolution. */
  keys: ScanScopeKeys;
  /** False with `resolveMissing=false`: nothing is resolved. */
  resolve: boolean;
  notes: string[];
}

/** Added when a scan that may resolve has no scope it can name. */
export const NO_SCOPE_NOTE =
  'Nothing was resolved: the scan names no scope (no hosts, no asset=, and no subject in the file such as a CycloneDX metadata.component or a SARIF versionControlProvenance).';

export const NOT_RESOLVING_NOTE = 'resolveMissing=false: cases this scan did not see were left as they were.';

export const EMPTY_SCOPE: ScanScope = Object.freeze({
  scanners: [],
  hosts: [],
  tooManyHosts: false,
  subjects: [],
}) as ScanScope;

export function rescanPlan(
  scope: ScanScope,
  upload: { assetName: string | null; resolveMissing: boolean },
): RescanPlan {
  const notes: string[] = [];
  const asset = upload.assetName?.trim() || null;
  let hostless: string | null = null;
  if (asset) hostless = `asset:${asset}`;
  else if (scope.subjects.length === 1) hostless = `subject:${scope.subjects[0]!}`;
  else if (scope.subjects.length > 1 && upload.resolveMissing)
    notes.push(
      `The file names ${scope.subjects.length} subjects (${scope.subjects.slice(0, 3).join(', ')}): findings without a host were resolved in none of them; upload with asset= to name one.`,
    );
  if (scope.tooManyHosts && upload.resolveMissing)
    notes.push(
      `The file lists more than ${MAX_SCOPE_HOSTS.toLocaleString('en')} hosts: nothing was resolved by host.`,
    );
  if (!upload.resolveMissing) notes.push(NOT_RESOLVING_NOTE);
  return {
    hostless,
    keys: { scanners: scope.scanners, hosts: scope.hosts, hostless },
    resolve: upload.resolveMissing,
    notes,
  };
}
