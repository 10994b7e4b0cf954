import { randomUUID } from 'node:crypto';
import { attributedAsset, type Finding, type FindingAsset } from '../../parsers/index.js';

/**
 * Rows of `COPY ... FROM STDIN` (text format) for findings, each with its evidence (docs/ingestion.md#formats;
 * m020). Text format, not CSV: most fields need no escaping at all, so a row is one join of
 * mostly untouched strings (see bench/ingest for the figures).
 */

/** Longest text kept per evidence field; 4,000 characters stay under the column's 16 KiB check. */
const MAX_EVIDENCE_CHARS = 4_000;

const bound = (s: string | null): string | null =>
  s === null ? null : s.length > MAX_EVIDENCE_CHARS ? `${s.slice(0, MAX_EVIDENCE_CHARS)}…[truncated]` : s;

/**
 * The label shown and filtered on as a finding's (and case's) asset: the upload's asset for a
 * finding without a host of its own (docs/ingestion.md#asset-context, see {@link attributedAsset}), else the most
 * readable name the finding carries.
 */
export function assetLabel(a: FindingAsset, uploadAsset: string | null = null): string | null {
  const upload = attributedAsset(a, uploadAsset);
  if (upload !== null) return upload;
  if (a.host) return a.host;
  if (a.fqdn) return a.fqdn;
  if (a.ip) return a.ip;
  if (a.purl) return a.purl;
  if (a.component) return a.componentVersion ? `${a.component}@${a.componentVersion}` : a.component;
  return a.file;
}

// PostgreSQL text values cannot hold NUL, so it is dropped; the rest is COPY text escaping.
/* eslint-disable no-control-regex -- NUL is matched on purpose, to drop it */
const SPECIAL = /[\\\t\n\r\u0000]/;
/* eslint-enable no-control-regex */

// One native replaceAll per character present is about 1.5x faster than one regex replace with
// a callback on raw excerpts (multi-line XML). The backslash goes first, so escapes are not doubled.
function text(s: string): string {
  if (!SPECIAL.test(s)) return s;
  if (s.includes('\\')) s = s.replaceAll('\\', '\\\\');
  if (s.includes('\t')) s = s.replaceAll('\t', '\\t');
  if (s.includes('\n')) s = s.replaceAll('\n', '\\n');
  if (s.includes('\r')) s = s.replaceAll('\r', '\\r');
  if (s.includes('\u0000')) s = s.replaceAll('\u0000', '');
  return s;
}

function field(v: string | number | boolean | null): string {
  if (v === null) return '\\N';
  return typeof v === 'string' ? text(v) : String(v);
}

/** A text[] literal: every element quoted, so commas, braces and "NULL" stay plain text. */
function arrayField(xs: string[]): string {
  if (xs.length === 0) return '{}';
  return text(`{${xs.map((x) => `"${x.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`);
}

/** Findings columns in the order of {@link findingRow}. */
export const FINDING_COPY_COLUMNS = `id, scan_id, workspace_id, record_index, fingerprint, scanner, rule_id, title, severity,
  cve_ids, cwe_ids, cvss_score, cvss_vector, cvss_v3_score, cvss_v3_vector, cvss_v2_score, cvss_v2_vector, description,
  solution, asset, host, ip, fqdn, os, component, component_version, purl, file, line, port, protocol, exploit_available,
  confidence, suppressed, aliases, raw_excerpt, scanner_output`;

/**
 * The scan a row belongs to, with the asset its upload named (`scans.asset_name`): the label of
 * its findings without a host. Their fingerprint already includes it (the parser's, see
 * `ParseScanOptions.uploadAsset`).
 */
export interface RowScan {
  id: string;
  workspaceId: string;
  /** @defaultValue null */
  uploadAsset?: string | null;
}

/** One findings row with its evidence (the sighting's bounded raw excerpt and scanner output), newline included. */
export function findingRow(id: string, scan: RowScan, f: Finding): string {
  const a = f.asset;
  const uploadAsset = scan.uploadAsset ?? null;
  return `${id}\t${scan.id}\t${scan.workspaceId}\t${f.recordIndex}\t${[
    field(f.fingerprint),
    field(f.scanner),
    field(f.ruleId),
    field(f.title),
    field(f.severity),
    arrayField(f.cveIds),
    arrayField(f.cweIds),
    field(f.cvssScore),
    field(f.cvssVector),
    field(f.cvssV3Score),
    field(f.cvssV3Vector),
    field(f.cvssV2Score),
    field(f.cvssV2Vector),
    field(f.description),
    field(f.solution),
    field(assetLabel(a, uploadAsset)),
    field(a.host),
    field(a.ip),
    field(a.fqdn),
    field(a.os),
    field(a.component),
    field(a.componentVersion),
    field(a.purl),
    field(a.file),
    field(a.line),
    field(f.port),
    field(f.protocol),
    field(f.exploitAvailable),
    field(f.confidence),
    field(f.suppressed),
    arrayField(f.aliases),
    field(bound(f.rawExcerpt) ?? ''),
    field(bound(f.evidence)),
  ].join('\t')}\n`;
}

let lastMs = 0;
let counter = 0;

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then a 12-bit counter within the millisecond,
 * then 62 random bits. Rows of one load get ids in insertion order, so the primary-key and
 * foreign-key indexes grow at their right edge instead of on random pages.
 */
export function uuidV7(): string {
  let ms = Date.now();
  if (ms <= lastMs) {
    counter++;
    if (counter > 0xfff) {
      lastMs++;
      counter = 0;
    }
    ms = lastMs;
  } else {
    lastMs = ms;
    counter = 0;
  }
  const hex = ms.toString(16).padStart(12, '0');
  // randomUUID's last 17 characters: the RFC 9562 variant nibble and 62 random bits (node caches its entropy).
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${counter.toString(16).padStart(3, '0')}-${randomUUID().slice(19)}`;
}
