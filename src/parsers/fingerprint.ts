import { hash } from 'node:crypto';
import type { FindingAsset } from './types.js';

/** The fields of a finding that define its case identity (docs/cases.md#deduplication). */
export interface FingerprintInput {
  scanner: string;
  ruleId: string | null;
  cveIds: readonly string[];
  title: string;
  asset: FindingAsset;
  port: number | null;
  protocol: string | null;
  producerFingerprints: Readonly<Record<string, string>> | null;
  /**
   * The asset named by the upload (`asset=` of docs/ingestion.md#asset-context). It counts only for a finding that
   * names no host of its own, see {@link attributedAsset}.
   * @defaultValue null
   */
  uploadAsset?: string | null;
}

/** Bumped whenever the canonical string changes, so old and new fingerprints never collide silently. */
const FINGERPRINT_VERSION = 'fp1';

const lower = (s: string | null): string => (s ?? '').trim().toLowerCase();

/**
 * Problem identity: a scanner's rule id is namespaced by scanner because plugin 10863 of Nessus and
 * QID 10863 of Qualys are different checks. Without a rule id the CVE set stands in, deliberately
 * not namespaced so that two tools reporting the same CVE on the same asset meet in one case.
 */
function problemKey(input: FingerprintInput): string {
  if (input.ruleId !== null && input.ruleId.trim() !== '')
    return `rule:${lower(input.scanner)}:${input.ruleId.trim()}`;
  if (input.cveIds.length > 0)
    return `cve:${[...input.cveIds]
      .map((c) => c.toUpperCase())
      .sort()
      .join(',')}`;
  return `title:${lower(input.scanner)}:${lower(input.title)}`;
}

/** Whether a finding names its own host (ip, FQDN or hostname), as network scanners' findings do. */
function hasHostIdentity(a: FindingAsset): boolean {
  return Boolean(a.ip || a.fqdn || a.host);
}

/**
 * The upload's asset a finding is attributed to (docs/ingestion.md#asset-context), or null. Findings
 * without a host (SARIF, CycloneDX, CLI findings without `asset`) only say which file or package,
 * not which application: the upload's `asset=` says that, so it joins their identity and label.
 * A finding with its own host keeps it: the scanner's host is more precise than an upload label
 * that may cover many hosts. Names are trimmed and otherwise compared exactly, like the `asset`
 * filter of the lists.
 */
export function attributedAsset(a: FindingAsset, uploadAsset: string | null | undefined): string | null {
  const name = uploadAsset?.trim();
  return name && !hasHostIdentity(a) ? name : null;
}

/**
 * Asset identity: IP first because every network scanner reports it while FQDNs come and go with
 * DNS; then names; for SCA the package URL (without qualifiers, which carry build-specific noise);
 * for SAST the file path. A hostless finding attributed to the upload's asset is prefixed with
 * that asset (JSON-quoted, so no name can imitate another key), so one package or one file of two
 * applications is two cases; without an upload asset the key is unchanged, and so are old
 * fingerprints.
 */
function assetKey(input: FingerprintInput): string {
  const own = ownAssetKey(input.asset);
  const upload = attributedAsset(input.asset, input.uploadAsset);
  return upload === null ? own : `upload:${JSON.stringify(upload)}/${own}`;
}

function ownAssetKey(a: FindingAsset): string {
  if (a.ip) return `ip:${lower(a.ip)}`;
  if (a.fqdn) return `host:${lower(a.fqdn)}`;
  if (a.host) return `host:${lower(a.host)}`;
  if (a.purl) return `purl:${a.purl.split('?')[0]!.trim()}`;
  if (a.component) return `component:${lower(a.component)}@${(a.componentVersion ?? '').trim()}`;
  if (a.file) return `file:${a.file.trim()}`;
  return 'none';
}

/**
 * Location: port/protocol for network findings. For code findings the producer's fingerprints are
 * preferred over the line number because lines move when unrelated code is edited; the line is
 * the fallback.
 */
function locationKey(input: FingerprintInput): string {
  if (input.port !== null) return `port:${input.port}/${lower(input.protocol)}`;
  const fps = input.producerFingerprints;
  if (fps && Object.keys(fps).length > 0) {
    return `fp:${Object.keys(fps)
      .sort()
      .map((k) => `${k}=${fps[k]}`)
      .join('&')}`;
  }
  if (input.asset.file) return `line:${input.asset.line ?? ''}`;
  if (input.protocol) return `proto:${lower(input.protocol)}`;
  return 'none';
}

/**
 * Canonical string for a finding's identity. Exposed for tests and debugging; persistence uses
 * {@link fingerprintFinding}.
 */
export function canonicalFingerprintString(input: FingerprintInput): string {
  return JSON.stringify([FINGERPRINT_VERSION, problemKey(input), assetKey(input), locationKey(input)]);
}

/**
 * Pure SHA-256 hex fingerprint: scanner rule id (or CVE set when there is none), plus asset (and
 * the upload's asset for a finding without a host), plus port or location (docs/ingestion.md#asset-context, docs/cases.md#deduplication). Findings with equal fingerprints in one workspace are
 * sightings of one case.
 */
export function fingerprintFinding(input: FingerprintInput): string {
  // One-shot hash (Node ≥ 20.12): no Hash object per finding; same digest as createHash.
  return hash('sha256', canonicalFingerprintString(input), 'hex');
}
