import { access, constants } from 'node:fs/promises';
import type { GateRecord } from './gate.js';
import { FileGateRecordStore } from './gate-record-store.js';

/** Where records are imported to: the database store, telling whether a record was new. */
export interface GateRecordSink {
  insert(record: GateRecord): Promise<boolean>;
}

export class GateRecordImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GateRecordImportError';
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks that an entry of a record file has the fields a gate run writes. The gate decides
 * whether the model serves, so a hand-edited or truncated entry is refused, not guessed at.
 */
function checkRecord(entry: unknown, index: number): GateRecord {
  const bad = (what: string): never => {
    throw new GateRecordImportError(`record ${index + 1}: ${what}`);
  };
  if (!isObject(entry)) return bad('not an object');
  const r = entry;
  if (typeof r.modelVersion !== 'string' || !r.modelVersion.startsWith('sha256:'))
    bad('modelVersion must be "sha256:<hex>"');
  if (typeof r.datasetSha256 !== 'string') bad('datasetSha256 must be a string');
  if (typeof r.datasetName !== 'string') bad('datasetName must be a string');
  if (!isObject(r.thresholds)) bad('thresholds must be an object');
  if (!isObject(r.metrics)) bad('metrics must be an object');
  if (typeof r.passed !== 'boolean') bad('passed must be true or false');
  if (!Array.isArray(r.failures) || !r.failures.every((f) => typeof f === 'string'))
    bad('failures must be a list of strings');
  if (typeof r.evaluatedAt !== 'string' || Number.isNaN(Date.parse(r.evaluatedAt)))
    bad('evaluatedAt must be an ISO 8601 time');
  return r as unknown as GateRecord;
}

/**
 * Reads the records of a file an earlier release wrote (`DATA_DIR/inhouse-gate.json`), every
 * entry checked.
 * @throws GateRecordImportError when the file is unreadable or an entry has the wrong shape.
 */
export async function readGateRecordFile(file: string): Promise<GateRecord[]> {
  let entries: unknown[];
  try {
    await access(file, constants.R_OK);
    entries = await new FileGateRecordStore(file).all();
  } catch (err) {
    throw new GateRecordImportError(`cannot read ${file}: ${(err as Error).message}`);
  }
  return entries.map(checkRecord);
}

/**
 * Copies records read by {@link readGateRecordFile} into the database, keeping their evaluation
 * times, so a pass recorded before the upgrade still counts and a later run still overrides it.
 * Idempotent: a record already in the database is skipped. Returns how many were new.
 */
export async function importGateRecords(
  records: readonly GateRecord[],
  sink: GateRecordSink,
): Promise<number> {
  let imported = 0;
  for (const record of records) if (await sink.insert(record)) imported++;
  return imported;
}
