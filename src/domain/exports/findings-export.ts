import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { Db } from '../../db/pool.js';
import { listFindings } from '../cases/finding-store.js';
import { viewFinding } from '../cases/case-views.js';
import type { ListFilters } from '../cases/list-filters.js';
import { neutraliseCell } from './csv-export.js';

/** Findings leave the service as CSV or JSON Lines (SARIF and VEX describe cases, not sightings). */
export const FINDING_EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type FindingExportFormat = (typeof FINDING_EXPORT_FORMATS)[number];

export type FindingView = ReturnType<typeof viewFinding>;

const FINDING_COLUMNS = [
  'id',
  'scanId',
  'caseId',
  'title',
  'severity',
  'cveIds',
  'cweIds',
  'cvssScore',
  'cvssVector',
  'kev',
  'asset',
  'host',
  'ip',
  'fqdn',
  'component',
  'componentVersion',
  'purl',
  'file',
  'line',
  'port',
  'protocol',
  'scanner',
  'ruleId',
  'createdAt',
  'fingerprint',
] as const;

const cell = (v: string | number | boolean | null): string | number | boolean =>
  v === null ? '' : typeof v === 'string' ? neutraliseCell(v) : v;

function findingRecord(f: FindingView): (string | number | boolean)[] {
  return [
    f.id,
    f.scanId,
    f.caseId ?? '',
    cell(f.title),
    f.severity,
    cell(f.cveIds.join(' ')),
    cell(f.cweIds.join(' ')),
    cell(f.cvssScore),
    cell(f.cvssVector),
    f.kev,
    cell(f.asset.name),
    cell(f.asset.host),
    cell(f.asset.ip),
    cell(f.asset.fqdn),
    cell(f.asset.component),
    cell(f.asset.componentVersion),
    cell(f.asset.purl),
    cell(f.asset.file),
    cell(f.asset.line),
    cell(f.port),
    cell(f.protocol),
    cell(f.scanner),
    cell(f.ruleId),
    f.createdAt,
    f.fingerprint,
  ];
}

/** The selected findings, newest first, page by page (the list route's own keyset paging). */
export async function* iterateFindings(
  db: Db,
  workspaceId: string,
  f: ListFilters,
): AsyncGenerator<FindingView> {
  let cursor: string | undefined;
  do {
    const page = await listFindings(db, workspaceId, { ...f, limit: 1_000, cursor });
    for (const row of page.data) yield viewFinding(row);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
}

/** Streams the findings a filter selects as CSV (RFC 4180, formula cells neutralised) or JSON Lines. */
export function renderFindings(findings: AsyncIterable<FindingView>, format: FindingExportFormat): Readable {
  if (format === 'jsonl') {
    return Readable.from(
      (async function* () {
        for await (const f of findings) yield JSON.stringify(f) + '\n';
      })(),
    );
  }
  const out: Readable = pipeline(
    Readable.from(
      (async function* () {
        for await (const f of findings) yield findingRecord(f);
      })(),
    ),
    stringify({
      header: true,
      columns: [...FINDING_COLUMNS],
      record_delimiter: 'windows',
      cast: { boolean: String },
    }),
    () => undefined,
  );
  return out;
}
