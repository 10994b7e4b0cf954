import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { InhouseModelError, loadInhouseModel } from './model.js';
import type { InhouseModel } from './model.js';

/**
 * Where the trained model ships, relative to the project root: gzip-compressed JSON (3 MB of
 * weights as text, 0.8 MB compressed). The version is the hash of the JSON body, so compression
 * changes neither the version nor a prediction.
 */
export const INHOUSE_MODEL_PATH = 'config/inhouse-model.json.gz';

/** The text of a model file: gunzipped when it starts with gzip's magic bytes, else as it is. */
function modelText(file: string): string {
  const bytes = readFileSync(file);
  return (bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes).toString('utf8');
}

/** The parsed JSON of a model file (`.json` or `.json.gz`), before any check. */
export function readInhouseModelJson(file: string): unknown {
  return JSON.parse(modelText(file));
}

/** Writes a model file atomically; gzip-compressed when `file` ends in `.gz`. */
export function writeInhouseModelFile(file: string, model: unknown): void {
  const text = `${JSON.stringify(model)}\n`;
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, file.endsWith('.gz') ? gzipSync(text, { level: 9 }) : text);
  renameSync(tmp, file);
}

/**
 * Reads and loads a model file. The only I/O of the model; `loadInhouseModel` stays pure.
 * @throws InhouseModelError when the file is unreadable, not JSON, or inconsistent.
 */
export function readInhouseModelFile(file: string): InhouseModel {
  let json: unknown;
  try {
    json = readInhouseModelJson(file);
  } catch (err) {
    throw new InhouseModelError(`cannot read model file ${file}: ${(err as Error).message}`);
  }
  try {
    return loadInhouseModel(json);
  } catch (err) {
    if (err instanceof InhouseModelError) throw new InhouseModelError(`${file}: ${err.message}`);
    throw err;
  }
}
