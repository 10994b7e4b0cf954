import type { Automatable, Exploitation, TechnicalImpact } from '../triage-engine/ssvc.js';

/**
 * The labelled-data format of the in-house model: one CVE per row with the SSVC
 * decision points CISA assigned in Vulnrichment. Training and the benchmark gate
 * read the same format, so the gate accepts any file of it (fixtures README).
 *
 * Header: `cve,exploitation,automatable,technical_impact,in_kev,cvss_base,cvss_vector,description`.
 * Dataset `exploitation` uses `poc`; the SSVC module spells it `public_poc`.
 */
export const DATASET_COLUMNS = [
  'cve',
  'exploitation',
  'automatable',
  'technical_impact',
  'in_kev',
  'cvss_base',
  'cvss_vector',
  'description',
] as const;

export interface LabelledRow {
  cve: string;
  exploitation: Exploitation;
  automatable: Automatable;
  technicalImpact: TechnicalImpact;
  kev: boolean;
  cvssScore: number | null;
  cvssVector: string | null;
  description: string;
}

/** A dataset that cannot be used; `message` names the line and the problem. */
export class InhouseDatasetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InhouseDatasetError';
  }
}

const EXPLOITATION: Record<string, Exploitation> = { none: 'none', poc: 'public_poc', active: 'active' };
const AUTOMATABLE: Record<string, Automatable> = { no: 'no', yes: 'yes' };
const TECHNICAL_IMPACT: Record<string, TechnicalImpact> = { partial: 'partial', total: 'total' };
const KEV: Record<string, boolean> = { '0': false, '1': true, false: false, true: true };

/**
 * Splits RFC 4180 CSV text into records (quoted fields, doubled quotes, CRLF or LF).
 * Returns each record with the 1-based line on which it starts, for error messages.
 */
export function parseCsv(text: string): { line: number; fields: string[] }[] {
  const records: { line: number; fields: string[] }[] = [];
  let fields: string[] = [];
  let field = '';
  let inQuotes = false;
  let line = 1;
  let recordLine = 1;
  let fieldStarted = false;
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  for (let i = 0; i < src.length; i++) {
    const ch = src[i];
    if (inQuotes) {
      if (ch === '"') {
        if (src[i + 1] === '"') {
          field += '"';
          i++;
        } else {
          inQuotes = false;
        }
      } else {
        if (ch === '\n') line++;
        field += ch;
      }
      continue;
    }
    if (ch === '"' && field === '') {
      inQuotes = true;
      fieldStarted = true;
    } else if (ch === ',') {
      fields.push(field);
      field = '';
      fieldStarted = true;
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && src[i + 1] === '\n') i++;
      if (fieldStarted || field !== '' || fields.length > 0) {
        fields.push(field);
        records.push({ line: recordLine, fields });
      }
      fields = [];
      field = '';
      fieldStarted = false;
      line++;
      recordLine = line;
    } else {
      field += ch;
      fieldStarted = true;
    }
  }
  if (inQuotes) throw new InhouseDatasetError(`line ${recordLine}: unterminated quoted field`);
  if (fieldStarted || field !== '' || fields.length > 0) {
    fields.push(field);
    records.push({ line: recordLine, fields });
  }
  return records;
}

/**
 * Parses and validates a labelled dataset. Every problem is fatal and named with its
 * line: a gate result over a silently half-read file would be worthless.
 */
export function parseLabelledDataset(text: string): LabelledRow[] {
  const records = parseCsv(text);
  const header = records[0];
  if (!header) throw new InhouseDatasetError('the dataset is empty (expected a header line)');
  const missing = DATASET_COLUMNS.filter((c) => !header.fields.includes(c));
  if (missing.length > 0) {
    throw new InhouseDatasetError(
      `header is missing column(s) ${missing.join(', ')}; expected ${DATASET_COLUMNS.join(',')}`,
    );
  }
  const col = Object.fromEntries(DATASET_COLUMNS.map((c) => [c, header.fields.indexOf(c)])) as Record<
    (typeof DATASET_COLUMNS)[number],
    number
  >;
  const rows: LabelledRow[] = [];
  const seen = new Set<string>();
  for (const { line, fields } of records.slice(1)) {
    if (fields.length !== header.fields.length) {
      throw new InhouseDatasetError(
        `line ${line}: expected ${header.fields.length} fields, found ${fields.length}`,
      );
    }
    const get = (c: (typeof DATASET_COLUMNS)[number]): string => (fields[col[c]] ?? '').trim();
    const cve = get('cve');
    if (!/^CVE-\d{4}-\d{4,}$/.test(cve)) throw new InhouseDatasetError(`line ${line}: bad cve "${cve}"`);
    if (seen.has(cve)) throw new InhouseDatasetError(`line ${line}: duplicate cve ${cve}`);
    seen.add(cve);
    const exploitation = EXPLOITATION[get('exploitation')];
    const automatable = AUTOMATABLE[get('automatable')];
    const technicalImpact = TECHNICAL_IMPACT[get('technical_impact')];
    const kev = KEV[get('in_kev')];
    if (!exploitation) throw badValue(line, 'exploitation', get('exploitation'), 'none|poc|active');
    if (!automatable) throw badValue(line, 'automatable', get('automatable'), 'yes|no');
    if (!technicalImpact) throw badValue(line, 'technical_impact', get('technical_impact'), 'partial|total');
    if (kev === undefined) throw badValue(line, 'in_kev', get('in_kev'), '0|1');
    const base = get('cvss_base');
    const cvssScore = base === '' ? null : Number(base);
    if (cvssScore !== null && !(Number.isFinite(cvssScore) && cvssScore >= 0 && cvssScore <= 10)) {
      throw badValue(line, 'cvss_base', base, 'empty or a number in [0, 10]');
    }
    const vector = get('cvss_vector');
    rows.push({
      cve,
      exploitation,
      automatable,
      technicalImpact,
      kev,
      cvssScore,
      cvssVector: vector === '' ? null : vector,
      description: fields[col.description] ?? '',
    });
  }
  if (rows.length === 0) throw new InhouseDatasetError('the dataset has a header but no rows');
  return rows;
}

function badValue(line: number, column: string, value: string, expected: string): InhouseDatasetError {
  return new InhouseDatasetError(`line ${line}: ${column} is "${value}", expected ${expected}`);
}
