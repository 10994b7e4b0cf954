import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { GateRecord } from './gate.js';

/**
 * Where gate results live: the database (`PgGateRecordStore`), which every process reads.
 * The file store remains to read records an earlier release wrote to `DATA_DIR`, for
 * `npm run gate -- --import FILE` (see `gate-record-import.ts`).
 */
export interface GateRecordStore {
  /** Adds a record; earlier records are kept as history. */
  append(record: GateRecord): Promise<void>;
  /**
   * The most recent record for exactly this model version, or null. The latest run
   * decides: a version that passed once and failed later is back in shadow.
   */
  latestFor(modelVersion: string): Promise<GateRecord | null>;
}

interface GateRecordFile {
  records: GateRecord[];
}

/**
 * A JSON file `{ "records": [...] }`, oldest first: where releases before the database table
 * kept the records. Writes go to a temporary file and are renamed into place, so a reader
 * never sees half a file. Not meant for concurrent writers.
 */
export class FileGateRecordStore implements GateRecordStore {
  constructor(private readonly file: string) {}

  /** Every record in the file, oldest first; none when the file does not exist. */
  async all(): Promise<GateRecord[]> {
    return (await this.read()).records;
  }

  private async read(): Promise<GateRecordFile> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [] };
      throw err;
    }
    const parsed = JSON.parse(text) as Partial<GateRecordFile>;
    if (!Array.isArray(parsed.records)) throw new Error(`${this.file}: expected {"records": [...]}`);
    return { records: parsed.records };
  }

  async append(record: GateRecord): Promise<void> {
    const content = await this.read();
    content.records.push(record);
    await mkdir(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.tmp-${process.pid}`;
    await writeFile(tmp, `${JSON.stringify(content, null, 2)}\n`);
    await rename(tmp, this.file);
  }

  async latestFor(modelVersion: string): Promise<GateRecord | null> {
    const { records } = await this.read();
    for (let i = records.length - 1; i >= 0; i--) {
      const r = records[i];
      if (r?.modelVersion === modelVersion) return r;
    }
    return null;
  }
}
