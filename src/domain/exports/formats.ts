import type { Readable } from 'node:stream';
import { renderCsv } from './csv-export.js';
import { renderJsonl } from './jsonl-export.js';
import { renderSarif } from './sarif-export.js';
import { renderVex } from './vex-export.js';
import type { Case } from '../cases/case.js';
import type { ExportMeta } from './export-case.js';

export const EXPORT_FORMATS = ['csv', 'jsonl', 'sarif', 'cyclonedx-vex'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface ExportRenderer {
  contentType: string;
  /** File name extension for downloads. */
  extension: string;
  render(cases: AsyncIterable<Case>, meta: ExportMeta, view?: (c: Case) => unknown): Readable;
}

/** The four case export formats (docs/exports.md): media type, file extension and streaming renderer. */
export const RENDERERS: Record<ExportFormat, ExportRenderer> = {
  csv: { contentType: 'text/csv; charset=utf-8', extension: 'csv', render: (cases) => renderCsv(cases) },
  jsonl: {
    contentType: 'application/x-ndjson; charset=utf-8',
    extension: 'jsonl',
    render: (cases, _meta, view) => renderJsonl(cases, view),
  },
  sarif: { contentType: 'application/sarif+json', extension: 'sarif', render: renderSarif },
  'cyclonedx-vex': {
    contentType: 'application/vnd.cyclonedx+json; version=1.6',
    extension: 'cdx.json',
    render: renderVex,
  },
};
