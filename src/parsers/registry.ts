import type { FormatModule } from './format-module.js';
import { nessus } from './nessus/index.js';
import { qualys } from './qualys/index.js';
import { openvas } from './openvas/index.js';
import { sarif } from './sarif/index.js';
import { cyclonedx } from './cyclonedx/index.js';
import { cli } from './cli/index.js';

/**
 * Every scan format the service reads, one line each (docs/ingestion.md#formats). Adding a
 * format is its folder and one line here: every other list (the API's `format` enum, the
 * console's picker, the CLI's choices, detection, the messages, the database's CHECK, checked by
 * a test) follows this one, in this order.
 */
export const FORMAT_MODULES = [nessus, qualys, openvas, sarif, cyclonedx, cli] as const;

/** One of the formats of {@link FORMAT_MODULES}. */
export type ScanFormat = (typeof FORMAT_MODULES)[number]['format'];

/** Every format's name, in registry order. */
export const SCAN_FORMATS: readonly ScanFormat[] = Object.freeze(FORMAT_MODULES.map((m) => m.format));

const BY_NAME = new Map<string, FormatModule<ScanFormat>>(FORMAT_MODULES.map((m) => [m.format, m]));

/** The module of a format. */
export function formatModule(format: ScanFormat): FormatModule<ScanFormat> {
  return BY_NAME.get(format)!;
}

/** Type guard for a user-supplied `format` override. */
export function isScanFormat(value: unknown): value is ScanFormat {
  return typeof value === 'string' && BY_NAME.has(value);
}

/** The detail of an upload whose format is not recognised: it lists every format accepted. */
export const UNSUPPORTED_FORMAT_MESSAGE = `The scan format could not be recognised. Supported: ${FORMAT_MODULES.map(
  (m) => m.listedAs,
).join(', ')}; pass format= to force one.`;
