import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';
import { CVE_ID, isIsoDate } from './formats.js';
import { malformed } from './import-error.js';

/**
 * The FIRST EPSS daily file: an optional first line
 * `#model_version:v2025.03.14,score_date:2025-03-15T00:00:00Z`, the header
 * `cve,epss,percentile`, then one row per CVE with both numbers in [0, 1].
 */
export interface EpssFileMeta {
  modelVersion: string | null;
  /** YYYY-MM-DD of the comment's `score_date`, or null when the file has no comment line. */
  scoreDate: string | null;
}

export interface EpssRow {
  cveId: string;
  /** The numbers as written in the file, validated: PostgreSQL parses them, so no float round trip. */
  epss: string;
  percentile: string;
}

const MAX_LINE = 64 * 1024;
const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

/** Parses the `#key:value,key:value` comment line. Unknown keys are ignored. */
export function parseEpssComment(line: string): EpssFileMeta {
  const meta: EpssFileMeta = { modelVersion: null, scoreDate: null };
  for (const part of line.replace(/^#/, '').split(',')) {
    const colon = part.indexOf(':');
    if (colon < 0) continue;
    const key = part.slice(0, colon).trim().toLowerCase();
    const value = part.slice(colon + 1).trim();
    if (key === 'model_version' && value) meta.modelVersion = value;
    if (key === 'score_date') {
      const day = value.slice(0, 10);
      if (!isIsoDate(day)) throw malformed(`score_date ${JSON.stringify(value)} is not a date`, 'line 1');
      meta.scoreDate = day;
    }
  }
  return meta;
}

/** Validates one data line; `lineNo` is 1-based in the file, for the error message. */
export function parseEpssRow(line: string, lineNo: number): EpssRow {
  const where = `line ${lineNo}`;
  const fields = line.split(',');
  if (fields.length !== 3)
    throw malformed(`expected 3 fields (cve,epss,percentile), got ${fields.length}`, where);
  const [cve, epss, percentile] = fields.map((f) => f.trim()) as [string, string, string];
  if (!CVE_ID.test(cve)) throw malformed(`${JSON.stringify(cve)} is not a CVE id`, where);
  checkProbability(epss, 'epss', where);
  checkProbability(percentile, 'percentile', where);
  return { cveId: cve.toUpperCase(), epss, percentile };
}

function checkProbability(value: string, field: string, where: string): void {
  const n = Number(value);
  if (!DECIMAL.test(value) || !(n >= 0 && n <= 1)) {
    throw malformed(`${field} ${JSON.stringify(value)} is not a number in [0, 1]`, where);
  }
}

/**
 * Bytes of an EPSS CSV in, PostgreSQL COPY text rows (`cve\tepss\tpercentile\n`) out.
 * Validates every line, so a bad file fails with its line number before anything is
 * replaced, and keeps only one partial line in memory.
 */
export class EpssCsvToCopy extends Transform {
  meta: EpssFileMeta = { modelVersion: null, scoreDate: null };
  rows = 0;
  private decoder = new StringDecoder('utf8');
  private partial = '';
  private lineNo = 0;
  private sawHeader = false;

  constructor() {
    super({ writableObjectMode: false, readableObjectMode: false });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    try {
      const text = this.partial + this.decoder.write(chunk);
      const lines = text.split('\n');
      this.partial = lines.pop() ?? '';
      if (this.partial.length > MAX_LINE)
        throw malformed(
          'a line longer than 64 KiB: not an EPSS CSV',
          `line ${this.lineNo + lines.length + 1}`,
        );
      const out = this.lines(lines);
      done(null, out.length > 0 ? out : undefined);
    } catch (err) {
      done(err as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      const out = this.lines([this.partial + this.decoder.end()]);
      this.partial = '';
      if (!this.sawHeader) throw malformed('no "cve,epss,percentile" header: not an EPSS file');
      if (this.rows === 0) throw malformed('the file has no scores');
      done(null, out.length > 0 ? out : undefined);
    } catch (err) {
      done(err as Error);
    }
  }

  private lines(lines: string[]): string {
    let out = '';
    for (let raw of lines) {
      this.lineNo++;
      if (this.lineNo === 1 && raw.charCodeAt(0) === 0xfeff) raw = raw.slice(1);
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line.trim() === '') continue;
      if (!this.sawHeader) {
        if (line.startsWith('#')) {
          if (this.lineNo === 1) this.meta = parseEpssComment(line);
          continue;
        }
        const header = line.split(',').map((h) => h.trim().toLowerCase());
        if (header.join(',') !== 'cve,epss,percentile') {
          throw malformed(
            `expected the header "cve,epss,percentile", got ${JSON.stringify(line.slice(0, 80))}`,
            `line ${this.lineNo}`,
          );
        }
        this.sawHeader = true;
        continue;
      }
      const row = parseEpssRow(line, this.lineNo);
      out += `${row.cveId}\t${row.epss}\t${row.percentile}\n`;
      this.rows++;
    }
    return out;
  }
}
