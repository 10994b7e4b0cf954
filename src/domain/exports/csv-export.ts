import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { Case } from '../cases/case.js';

/** Column order of the CSV export; the header row names them. */
export const CSV_COLUMNS = [
  'id',
  'title',
  'severity',
  'priority',
  'recommendedAction',
  'confidenceScore',
  'status',
  'dueAt',
  'sla',
  'kev',
  'epss',
  'cvssScore',
  'cveIds',
  'cweIds',
  'asset',
  'host',
  'ip',
  'fqdn',
  'component',
  'componentVersion',
  'port',
  'protocol',
  'file',
  'line',
  'scanner',
  'ruleId',
  'firstSeen',
  'lastSeen',
  'sightings',
  'triagedAt',
  'triageModel',
  'triageStale',
  'fingerprint',
  'assignee',
  'tags',
  'acceptanceExpiresAt',
  'acceptanceNote',
] as const;

/**
 * Spreadsheets run a cell that starts with one of these as a formula (CSV injection, OWASP):
 * such a text cell is prefixed with `'`, which every spreadsheet shows as text.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** A text cell made inert for spreadsheets. Numbers and booleans are written as they are. */
export function neutraliseCell(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

function text(v: string | null | undefined): string {
  return v == null ? '' : neutraliseCell(v);
}

/** One case as a CSV record, in {@link CSV_COLUMNS} order. */
export function csvRecord(c: Case): (string | number | boolean)[] {
  const t = c.triage;
  return [
    c.id,
    text(c.title),
    c.severity,
    t?.priority ?? '',
    t?.recommendedAction ?? '',
    t ? t.confidenceScore : '',
    c.status,
    c.dueAt ?? '',
    c.sla ?? '',
    c.kev,
    c.epss ?? '',
    c.cvssScore ?? '',
    text(c.cveIds.join(' ')),
    text(c.cweIds.join(' ')),
    text(c.asset),
    text(c.host),
    text(c.ip),
    text(c.fqdn),
    text(c.component),
    text(c.componentVersion),
    c.port ?? '',
    text(c.protocol),
    text(c.file),
    c.line ?? '',
    text(c.scanner),
    text(c.ruleId),
    c.firstSeen,
    c.lastSeen,
    c.sightings,
    t?.triagedAt ?? '',
    text(t?.model),
    c.triageStale,
    c.fingerprint,
    text(c.assignee),
    text(c.tags.join(' ')),
    c.acceptance?.expiresAt ?? '',
    text(c.acceptance?.note),
  ];
}

/**
 * RFC 4180 CSV (CRLF, quotes doubled, UTF-8, header row) through csv-stringify, streaming: the
 * cases are mapped to records on the way in and backpressure runs end to end. Destroying the
 * returned stream (a client that went away) ends the source iterator, and so its query.
 */
export function renderCsv(cases: AsyncIterable<Case>): Readable {
  const records = Readable.from(mapRecords(cases));
  const out: Readable = pipeline(
    records,
    stringify({
      header: true,
      columns: [...CSV_COLUMNS],
      record_delimiter: 'windows',
      cast: { boolean: (v) => (v ? 'true' : 'false') },
    }),
    () => undefined, // pipeline destroys every stage on error; `out` carries it to its reader
  );
  return out;
}

async function* mapRecords(cases: AsyncIterable<Case>): AsyncGenerator<(string | number | boolean)[]> {
  for await (const c of cases) yield csvRecord(c);
}
