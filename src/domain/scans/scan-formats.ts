import { FORMAT_MODULES, type ScanFormat } from '../../parsers/index.js';

/**
 * The scan formats the service accepts (docs/ingestion.md#formats), as the domain names them:
 * the edges (the upload route's schema, the console) take them from here, not from the parsers,
 * which only domain/ and workers/ reach. Both lists follow the parsers' registry.
 */
export { SCAN_FORMATS, type ScanFormat } from '../../parsers/index.js';

/** How the console names each format (upload picker, scans table). */
export const SCAN_FORMAT_LABELS: Readonly<Record<ScanFormat, string>> = Object.freeze(
  Object.fromEntries(FORMAT_MODULES.map((m) => [m.format, m.label])) as Record<ScanFormat, string>,
);
