import type { FormatParser } from './format-parser.js';

/**
 * What one scan format is: every format lives in its own folder (`parsers/<format>/`), which
 * owns both recognising its input ({@link FormatModule.sniff}) and reading it
 * ({@link FormatModule.parse}), and is registered by one line in `registry.ts`. Nothing else
 * keeps a list of formats: the API's enum, the console's picker, the detection order and the
 * messages are read from the registry (docs/ingestion.md#formats).
 */

/** The first bytes of a file, as detection sees them: read once, offered to every format. */
export interface ScanHead {
  /** The head as text, a byte-order mark and leading white space removed. */
  text: string;
  /** For a head that starts like XML: its root element's local name and start tag; else null. */
  xmlRoot: { name: string; tag: string } | null;
  /**
   * For a head that starts like JSON and tokenises as a (possibly cut) JSON document: its
   * top-level keys and scalars, and the keys of the objects of a top-level `runs` array.
   * Null for anything else (JSON Lines included).
   */
  json: JsonHead | null;
}

/** What {@link ScanHead.json} records of a JSON document's head. */
export interface JsonHead {
  keys: Set<string>;
  scalars: Map<string, string>;
  runItemKeys: Set<string>;
}

/**
 * What a format says of a head: `sure` when the head declares it (a root element, a
 * `bomFormat`), `likely` when the head only has the format's shape (keys a document of it has),
 * null when it is not the format. Detection takes the first `sure` format in registry order,
 * else the first `likely` one.
 */
export type Sniffed = 'sure' | 'likely' | null;

/** One scan format, as its folder exports it. */
export interface FormatModule<F extends string = string> {
  /** Its name on the wire: the `format` of an upload and of a scan. */
  format: F;
  /** How the console names it (upload picker, scans table). */
  label: string;
  /** How the `unsupported_format` message lists it among the formats accepted, e.g. `Nessus v2`. */
  listedAs: string;
  /** A file of it in a sentence ("The file looks like …"), e.g. `a Nessus v2 report`. */
  aFile: string;
  /** Recognises the format from a file's head. */
  sniff(head: ScanHead): Sniffed;
  /** Reads a file of the format into finding drafts. */
  parse: FormatParser;
}

/** Declares a format; keeps its name a literal type, so the registry derives `ScanFormat`. */
export function defineFormat<const F extends string>(module: FormatModule<F>): FormatModule<F> {
  return module;
}
