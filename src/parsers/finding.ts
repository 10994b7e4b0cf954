import type { ScanFormat } from './registry.js';
import type { ScanScope } from './scope.js';
import type { FindingFields } from './types.js';

/** A normalised finding as handed to persistence (see the glossary of `types.ts`). */
export interface Finding extends FindingFields {
  format: ScanFormat;
}

/** Summary known once the stream has been fully consumed. */
export interface ParseResult {
  format: ScanFormat;
  /** Number of findings emitted. */
  count: number;
  /** Bytes read from the (decompressed) input. */
  bytes: number;
  /** Human notes, e.g. "BOM has components but no vulnerabilities". */
  notes: string[];
  /** What the file covered: scanners, hosts, subject (docs/ingestion.md#rescans). */
  scope: ScanScope;
}
