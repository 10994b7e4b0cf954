/**
 * Public surface of the scan parsers: stream in, normalised finding batches out (docs/ingestion.md#parsing, docs/ingestion.md#formats).
 * No database, no queue: persistence iterates {@link parseScan} (or the worker pool) and writes
 * batches keyed by (scan id, recordIndex).
 */
export {
  parseScan,
  parseScanToArray,
  DEFAULT_BATCH_SIZE,
  type ParseScanOptions,
  type ScanParse,
} from './parse-scan.js';
export { detectFormat, FORMAT_OVERRIDES, DETECT_HEAD_BYTES } from './detect.js';
export {
  FORMAT_MODULES,
  SCAN_FORMATS,
  UNSUPPORTED_FORMAT_MESSAGE,
  formatModule,
  isScanFormat,
  type ScanFormat,
} from './registry.js';
export type { FormatModule, ScanHead, Sniffed } from './format-module.js';
export type { Finding, ParseResult } from './finding.js';
export { MAX_SCOPE_HOSTS, hostIdentity, type ScanScope, type ScopeHost } from './scope.js';
export {
  fingerprintFinding,
  canonicalFingerprintString,
  attributedAsset,
  type FingerprintInput,
} from './fingerprint.js';
export {
  ParseError,
  isParseErrorLike,
  toParseError,
  type ParseErrorCode,
  type ParseErrorObject,
} from './parse-error.js';
export type { ByteSource } from './input-stream.js';
export type { XmlEngineName } from './xml/xml-engine.js';
export {
  DEFAULT_LIMITS,
  EXCERPT_TRUNCATION_MARKER,
  type FindingAsset,
  type ParseLimits,
  type Severity,
} from './types.js';
