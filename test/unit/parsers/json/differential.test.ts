import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { CliHandler } from '../../../../src/parsers/cli/parse.js';
import { CyclonedxJsonHandler } from '../../../../src/parsers/cyclonedx/json.js';
import type { ParserContext } from '../../../../src/parsers/format-parser.js';
import { ScopeCollector } from '../../../../src/parsers/scope.js';
import { walkJsonLines } from '../../../../src/parsers/json/walk-json-lines.js';
import { walkJson, type JsonHandler, type JsonPath } from '../../../../src/parsers/json/walk-json.js';
import { SarifHandler } from '../../../../src/parsers/sarif/parse.js';
import { DEFAULT_LIMITS, type FindingDraft } from '../../../../src/parsers/types.js';
import { fixturePath } from '../fixture-paths.js';

/*
 * The streaming JSON parsers against a reference that cannot share their bugs: the whole file
 * JSON.parse'd, walked depth-first, and the same format handler called for every path in
 * document order (select, onValue, onContainerEnd, end). Fixture keys are never integer-like, so
 * Object.entries keeps the file's key order.
 */
function reference(doc: unknown, handler: JsonHandler): FindingDraft[] {
  const visit = (value: unknown, path: JsonPath): void => {
    if (handler.select(path)) return handler.onValue(path, value);
    if (typeof value !== 'object' || value === null) return;
    const entries: [string | number, unknown][] = Array.isArray(value)
      ? value.map((v, i) => [i, v])
      : Object.entries(value);
    for (const [k, v] of entries) visit(v, [...path, k]);
    handler.onContainerEnd?.(path);
  };
  visit(doc, []);
  handler.end?.();
  return handler.out;
}

const context = (): ParserContext => ({
  limits: { ...DEFAULT_LIMITS },
  notes: [],
  xmlEngine: 'saxes',
  tmpDir: '/tmp',
  scope: new ScopeCollector(),
});

const dir = (d: string, ext: RegExp) =>
  readdirSync(fixturePath(`scans/${d}`))
    .filter((f) => ext.test(f))
    .map((f) => `scans/${d}/${f}`);

const CASES: [file: string, make: (ctx: ParserContext) => JsonHandler][] = [
  ...dir('sarif', /\.sarif$/).map((f): [string, (ctx: ParserContext) => JsonHandler] => [
    f,
    (ctx) => new SarifHandler(ctx),
  ]),
  ...dir('cyclonedx', /\.json$/).map((f): [string, (ctx: ParserContext) => JsonHandler] => [
    f,
    (ctx) => new CyclonedxJsonHandler(ctx),
  ]),
  ...['own:cyclonedx-1.5.json', 'own:cyclonedx-1.6.json'].map(
    (f): [string, (ctx: ParserContext) => JsonHandler] => [f, (ctx) => new CyclonedxJsonHandler(ctx)],
  ),
  ['own:cli-findings.json', (ctx) => new CliHandler(ctx, false)],
];

async function collect(gen: AsyncGenerator<FindingDraft[]>): Promise<FindingDraft[]> {
  const out: FindingDraft[] = [];
  for await (const batch of gen) out.push(...batch);
  return out;
}

const chunked = (bytes: Buffer, size: number) =>
  Readable.from(
    Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) =>
      bytes.subarray(i * size, (i + 1) * size),
    ),
  );

describe('the record scanner gives the drafts of a whole-document JSON.parse', () => {
  it.each(CASES)('%s', async (file, make) => {
    const bytes = readFileSync(fixturePath(file));
    const refCtx = context();
    const expected = reference(JSON.parse(bytes.toString('utf8').replace(/^\uFEFF/, '')), make(refCtx));
    for (const size of [7, 4096, bytes.length]) {
      const ctx = context();
      expect(await collect(walkJson(chunked(bytes, size), make(ctx), ctx))).toEqual(expected);
      expect(ctx.notes).toEqual(refCtx.notes);
    }
  });

  it('own:cli-findings.jsonl, line by line', async () => {
    const bytes = readFileSync(fixturePath('own:cli-findings.jsonl'));
    const refHandler = new CliHandler(context(), true);
    for (const line of bytes.toString('utf8').split('\n'))
      if (line.trim() !== '') refHandler.onValue([], JSON.parse(line));
    refHandler.end();
    expect(refHandler.out).toHaveLength(3);
    for (const size of [1, 7, bytes.length]) {
      const ctx = context();
      expect(await collect(walkJsonLines(chunked(bytes, size), new CliHandler(ctx, true), ctx))).toEqual(
        refHandler.out,
      );
    }
  });
});
