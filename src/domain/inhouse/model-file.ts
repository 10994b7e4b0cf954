import { readFileSync } from 'node:fs';
import { InhouseModelError, loadInhouseModel } from './model.js';
import type { InhouseModel } from './model.js';

/** Where the trained model ships, relative to the project root. */
export const INHOUSE_MODEL_PATH = 'config/inhouse-model.json';

/**
 * Reads and loads a model file. The only I/O of the model; `loadInhouseModel` stays pure.
 * @throws InhouseModelError when the file is unreadable, not JSON, or inconsistent.
 */
export function readInhouseModelFile(file: string): InhouseModel {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
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
