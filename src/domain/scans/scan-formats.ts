/**
 * The scan formats the service accepts (docs/ingestion.md#formats), as the domain names them: the edges (the
 * upload route's schema) take them from here, not from the parsers, which only domain/ and
 * workers/ reach.
 */
export { SCAN_FORMATS, type ScanFormat } from '../../parsers/index.js';
