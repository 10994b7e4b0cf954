import type { FormatParser } from './format-parser.js';
import { parseNessus } from './nessus.js';
import { parseOpenvas } from './openvas.js';
import { parseQualys } from './qualys.js';
import { parseSarif } from './sarif.js';
import { parseCyclonedx } from './cyclonedx.js';
import { parseCli } from './cli.js';
import type { ScanFormat } from './types.js';

/** One parser per format (docs/ingestion.md#formats). */
export const FORMAT_PARSERS: Readonly<Record<ScanFormat, FormatParser>> = {
  nessus: parseNessus,
  qualys: parseQualys,
  openvas: parseOpenvas,
  sarif: parseSarif,
  cyclonedx: parseCyclonedx,
  cli: parseCli,
};
