/**
 * Differential check at scale (bench only): parses a generated JSON file with the record
 * scanner (`walkJson`, `walkJsonLines`: what production runs) and with the previous
 * token-based walker (`walkJsonTokens`: stream-json and the path assembler) through the same
 * format handler, and fails on the first draft that differs. The unit tests do the same for
 * every fixture against a whole-document `JSON.parse` reference.
 *
 *   npx tsx bench/parsers/differential.ts --file bench/.data/sarif-100mb.sarif
 *   npx tsx bench/parsers/differential.ts --file bench/.data/cli-100mb.jsonl --format cli
 */
import { basename } from 'node:path';
import { createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { isDeepStrictEqual } from 'node:util';
import { CliHandler } from '../../src/parsers/cli/parse.js';
import { CyclonedxJsonHandler } from '../../src/parsers/cyclonedx/json.js';
import type { ParserContext } from '../../src/parsers/format-parser.js';
import { ScopeCollector } from '../../src/parsers/scope.js';
import { walkJsonLines } from '../../src/parsers/json/walk-json-lines.js';
import { walkJsonTokens } from './legacy-walk-json.js';
import { walkJson, type JsonHandler } from '../../src/parsers/json/walk-json.js';
import { SarifHandler } from '../../src/parsers/sarif/parse.js';
import { DEFAULT_LIMITS, type FindingDraft } from '../../src/parsers/types.js';

const { values } = parseArgs({ options: { file: { type: 'string' }, format: { type: 'string' } } });
const file = values.file!;
const format =
  values.format ?? ['sarif', 'cyclonedx-json', 'cli'].find((f) => basename(file).startsWith(`${f}-`));
const lines = format === 'cli' && file.endsWith('.jsonl');

function handler(ctx: ParserContext): JsonHandler {
  if (format === 'sarif') return new SarifHandler(ctx);
  if (format === 'cyclonedx-json') return new CyclonedxJsonHandler(ctx);
  if (format === 'cli') return new CliHandler(ctx, lines);
  throw new Error('pass --format sarif|cyclonedx-json|cli');
}

const context = (): ParserContext => ({
  limits: { ...DEFAULT_LIMITS },
  notes: [],
  xmlEngine: 'saxes',
  tmpDir: tmpdir(),
  scope: new ScopeCollector(),
});
const chunks = () => createReadStream(file, { highWaterMark: 64 * 1024 }) as AsyncIterable<Buffer>;

async function* drafts(gen: AsyncGenerator<FindingDraft[]>): AsyncGenerator<FindingDraft> {
  for await (const batch of gen) yield* batch;
}

const newCtx = context();
const oldCtx = context();
const fresh = drafts(
  lines ? walkJsonLines(chunks(), handler(newCtx), newCtx) : walkJson(chunks(), handler(newCtx), newCtx),
);
const old = drafts(walkJsonTokens(chunks(), handler(oldCtx), oldCtx, { jsonStreaming: lines }));
let n = 0;
for (;;) {
  const [a, b] = await Promise.all([fresh.next(), old.next()]);
  if (a.done || b.done) {
    if (a.done !== b.done) throw new Error(`count differs after ${n} drafts (new ended: ${a.done})`);
    break;
  }
  if (!isDeepStrictEqual({ ...a.value }, { ...b.value })) {
    console.error(JSON.stringify(a.value).slice(0, 2000));
    console.error(JSON.stringify(b.value).slice(0, 2000));
    throw new Error(`draft ${n} differs`);
  }
  n++;
}
if (!isDeepStrictEqual(newCtx.notes, oldCtx.notes))
  throw new Error(`notes differ: ${newCtx.notes} / ${oldCtx.notes}`);
console.log(
  `${basename(file)}: ${n} drafts, identical to the token-based walker; notes ${JSON.stringify(newCtx.notes)}`,
);
