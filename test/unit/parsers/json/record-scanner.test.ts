import { describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { ParseError } from '../../../../src/parsers/index.js';
import { JsonRecordScanner, type JsonPath } from '../../../../src/parsers/json/json-record-scanner.js';
import { walkJsonLines } from '../../../../src/parsers/json/walk-json-lines.js';
import { ScopeCollector } from '../../../../src/parsers/scope.js';
import { DEFAULT_LIMITS, type FindingDraft } from '../../../../src/parsers/types.js';

const LIMITS = { maxDepth: 64, maxTokenBytes: 1024, maxRecordBytes: 4096 };

// Selects what SARIF selects: each run's tool and each result.
const sarifLike = (path: JsonPath) =>
  path.length >= 3 &&
  path[0] === 'runs' &&
  (path[2] === 'tool' ? path.length === 3 : path[2] === 'results' && path.length === 4);

/** Feeds `bytes` in chunks of `size`, returns the selected values and the containers that closed. */
function scan(bytes: Buffer, size: number, limits = LIMITS, select = sarifLike) {
  const values: [JsonPath, unknown][] = [];
  const ends: JsonPath[] = [];
  const scanner = new JsonRecordScanner(
    { select, onValue: (p, v) => values.push([p, v]), onContainerEnd: (p) => ends.push(p) },
    limits,
  );
  for (let i = 0; i < bytes.length; i += size) scanner.write(bytes.subarray(i, i + size));
  scanner.end();
  return { values, ends };
}

function scanError(text: string | Buffer, size = 1 << 20, limits = LIMITS): ParseError {
  try {
    scan(Buffer.from(text), size, limits);
  } catch (err) {
    expect(err).toBeInstanceOf(ParseError);
    return err as ParseError;
  }
  throw new Error('expected a ParseError');
}

// Strings full of what a byte scanner could mistake for structure, escapes of every kind, raw
// multi-byte UTF-8 (2, 3 and 4 bytes) and a BOM, so that chunk boundaries fall everywhere.
const RESULTS = [
  { ruleId: 'a', message: { text: 'braces {}}} and brackets [[]] "quoted" },{ ]' } },
  { ruleId: 'b\\', message: { text: 'ends in a backslash \\', arguments: ['\\"', '\\\\"'] } },
  { ruleId: 'c', message: { text: 'unicode \u00e9 \u4e2d \ud83d\ude00 and escapes \b\f\n\r\t\u0000/' } },
  { ruleId: 'd', properties: { nested: [[{ deep: [1, -2.5e3, true, false, null] }]], empty: {} } },
];
const DOC = {
  version: '2.1.0',
  runs: [
    { tool: { driver: { name: 'x "}{', rules: [{ id: 'a' }] } }, results: RESULTS, extra: ['}', '{'] },
    { results: [], tool: { driver: { name: 'y' } } },
  ],
};
// Pretty text with \u escapes written out (JSON.stringify prints raw characters) and a BOM.
const PRETTY = `\uFEFF${JSON.stringify(DOC, null, 2).replace('\u00e9', '\\u00e9').replace('"x \\"}{"', '"x \\"\\u007d{"')}`;

describe('JsonRecordScanner', () => {
  const bytes = Buffer.from(PRETTY, 'utf8');
  const whole = JSON.parse(PRETTY.slice(1)) as typeof DOC;
  const expected: [JsonPath, unknown][] = [
    [['runs', 0, 'tool'], whole.runs[0]!.tool],
    ...RESULTS.map((_, i): [JsonPath, unknown] => [['runs', 0, 'results', i], whole.runs[0]!.results[i]]),
    [['runs', 1, 'tool'], whole.runs[1]!.tool],
  ];

  it.each(Array.from({ length: 40 }, (_, i) => i + 1).concat([bytes.length]))(
    'finds the same records in chunks of %i bytes',
    (size) => {
      const { values, ends } = scan(bytes, size);
      expect(values).toEqual(expected);
      expect(ends).toEqual([
        ['runs', 0, 'results'],
        ['runs', 0, 'extra'],
        ['runs', 0],
        ['runs', 1, 'results'],
        ['runs', 1],
        ['runs'],
        [],
      ]);
    },
  );

  it('finds the same records at every split point of two chunks', () => {
    for (let cut = 1; cut < bytes.length; cut++) {
      const values: unknown[] = [];
      const scanner = new JsonRecordScanner(
        { select: sarifLike, onValue: (_p, v) => values.push(v) },
        LIMITS,
      );
      scanner.write(bytes.subarray(0, cut));
      scanner.write(bytes.subarray(cut));
      scanner.end();
      expect(values).toEqual(expected.map(([, v]) => v));
    }
  });

  it('decodes unicode escapes and raw UTF-8 as JSON.parse does', () => {
    const { values } = scan(bytes, 3);
    const c = values[3]![1] as { message: { text: string } };
    expect(c.message.text).toBe('unicode \u00e9 \u4e2d \ud83d\ude00 and escapes \b\f\n\r\t\u0000/');
    expect((values[0]![1] as { driver: { name: string } }).driver.name).toBe('x "}{');
  });

  it('refuses every truncation of the document', () => {
    for (let cut = 0; cut < bytes.length - 1; cut++) {
      const err = scanError(bytes.subarray(0, cut), 5);
      expect(err.code).toBe('unparseable_scan');
      expect(err.message).toMatch(/^(The JSON document ends before it is complete|Invalid JSON near line)/);
    }
  });

  it('names the line and column of a truncated document', () => {
    const err = scanError('{"runs": [\n  {"results": [\n    {"ruleId": "a"', 4);
    expect(err.message).toBe('The JSON document ends before it is complete (truncated file?) at line 3.');
    expect([err.line, err.column]).toEqual([3, 19]);
  });

  it.each([
    [
      'between records',
      '{"runs":[{"results":[\n {"a":1},\n  oops {"b":2}]}]}',
      3,
      3,
      "Invalid JSON near line 3, column 3: unexpected 'o', expected a value.",
    ],
    [
      'after a record',
      '{"runs":[{"results":[{"a":1} {"b":2}]}]}',
      1,
      30,
      "Invalid JSON near line 1, column 30: unexpected '{', expected ',' or the end of the object or array.",
    ],
    [
      'inside a record',
      '{"runs":[{"results":[\n{"a":1,\n "b": tru}]}]}',
      2,
      1,
      "Invalid JSON near line 2, column 1: Unexpected token '}'.",
    ],
    [
      'inside a record, with a position',
      '{"runs":[{"results":[\n{"a":1,\n "b" 2}]}]}',
      3,
      6,
      'Invalid JSON near line 3, column 6: Unexpected number.',
    ],
    [
      'after the document',
      '{"runs":[]} {}',
      1,
      13,
      "Invalid JSON near line 1, column 13: unexpected '{', unexpected data after the end of the document.",
    ],
    [
      'a bad escape outside records',
      '{"runs":[], "x": "\\q"}',
      1,
      20,
      'Invalid JSON near line 1, column 20: Bad escaped character.',
    ],
    [
      'a mismatched bracket',
      '{"runs":[}',
      1,
      10,
      "Invalid JSON near line 1, column 10: unexpected '}', expected a value.",
    ],
  ])('refuses garbage %s with its line and column', (_name, text, line, column, message) => {
    for (const size of [1, 2, 7, 1 << 20]) {
      const err = scanError(text, size);
      expect(err.message).toBe(message);
      expect([err.line, err.column]).toEqual([line, column]);
    }
  });

  it('refuses a record over the size limit, naming where it starts, before reading it all', () => {
    const big = `{"runs":[{"results":[{"a":1},\n  {"b":[${'"0123456789",'.repeat(400)}"x"]}]}]}`;
    for (const size of [1, 64, 1 << 20]) {
      const err = scanError(big, size);
      expect(err.message).toBe(
        'A JSON record at runs.0.results.1 (line 2, column 3) is larger than the 4 KiB limit.',
      );
      expect([err.line, err.column]).toEqual([2, 3]);
    }
    // Streamed: the error comes once the limit is passed, not at the end of the record.
    const values: unknown[] = [];
    const scanner = new JsonRecordScanner({ select: sarifLike, onValue: (_p, v) => values.push(v) }, LIMITS);
    scanner.write(Buffer.from('{"runs":[{"results":[{"b":['));
    expect(() => scanner.write(Buffer.from('1,'.repeat(2500)))).toThrow(/larger than the 4 KiB limit/);
  });

  it('refuses a string over the text limit inside and outside records', () => {
    for (const size of [3, 1 << 20]) {
      const inside = scanError(`{"runs":[{"results":[{"m":"${'y'.repeat(1100)}"}]}]}`, size);
      expect(inside.message).toBe('A JSON string near line 1 exceeds the 1 KiB size limit.');
      const outside = scanError(`{"runs":[],\n"x":"${'y'.repeat(1100)}"}`, size);
      expect(outside.message).toBe('A JSON string near line 2 exceeds the 1 KiB size limit.');
      expect([outside.line, outside.column]).toEqual([2, 5]);
    }
  });

  it.each([
    ['outside records', `{"runs":${'['.repeat(100)}`],
    ['inside a record', `{"runs":[{"results":[${'['.repeat(100)}`],
    ['inside a record, nested objects', `{"runs":[{"results":[${'{"a":'.repeat(100)}`],
  ])('stops at the nesting limit %s', (_name, text) => {
    for (const size of [1, 1 << 20]) {
      const err = scanError(text, size);
      expect(err.message).toBe('JSON nesting is deeper than the limit of 64 levels.');
      expect(err.line).toBe(1);
    }
  });

  it('keeps selected scalars and skips unselected ones', () => {
    const { values } = scan(
      Buffer.from('{"runs":[{"tool":"t","results":[1,"s",null,{"a":[]}],"n":-1.5e3}]}'),
      2,
    );
    expect(values).toEqual([
      [['runs', 0, 'tool'], 't'],
      [['runs', 0, 'results', 0], 1],
      [['runs', 0, 'results', 1], 's'],
      [['runs', 0, 'results', 2], null],
      [['runs', 0, 'results', 3], { a: [] }],
    ]);
  });
});

async function lines(text: string | Buffer, size: number, limits = {}) {
  const values: unknown[] = [];
  const handler = {
    out: [] as FindingDraft[],
    select: () => true,
    onValue: (_p: JsonPath, v: unknown) => values.push(v),
  };
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  const ctx = {
    limits: { ...DEFAULT_LIMITS, ...limits },
    notes: [],
    xmlEngine: 'saxes' as const,
    tmpDir: '/tmp',
    scope: new ScopeCollector(),
  };
  for await (const _ of walkJsonLines(Readable.from(chunks), handler, ctx)) void _;
  return values;
}

describe('walkJsonLines', () => {
  const records = [
    { title: 'a "}{"', n: 1 },
    { title: '\u00e9\ud83d\ude00', list: [1, [2]] },
    { title: 'c\\' },
  ];
  const text = `\uFEFF${records.map((r) => JSON.stringify(r)).join('\n')}\r\n\n  \n${JSON.stringify({ title: 'last' })}`;

  it.each([1, 2, 3, 5, 8, 13, 64, 4096])('reads the same values in chunks of %i bytes', async (size) => {
    expect(await lines(text, size)).toEqual([...records, { title: 'last' }]);
  });

  it('names the line and column of a broken line', async () => {
    const err = await lines('{"title":"a"}\n\n{"title": "b",}\n', 4).catch((e: unknown) => e as ParseError);
    expect(err).toMatchObject({
      message: 'Invalid JSON near line 3, column 15: Expected double-quoted property name.',
      line: 3,
      column: 15,
    });
  });

  it('refuses a line over the record limit before parsing it', async () => {
    const long = `{"title":"a"}\n{"title":"${'x'.repeat(5000)}"}\n`;
    for (const size of [7, 1 << 20]) {
      const err = await lines(long, size, { maxTextBytes: 1000 }).catch((e: unknown) => e as ParseError);
      expect(err).toMatchObject({
        message: 'A JSON record at line 2, column 1 is larger than the 3.9 KiB limit.',
        line: 2,
      });
    }
  });

  it('keeps the nesting and string limits', async () => {
    const deep = await lines(`{"title":"a","x":${'['.repeat(300)}${']'.repeat(300)}}`, 9).catch(
      (e: unknown) => e as Error,
    );
    expect(deep).toMatchObject({ message: 'JSON nesting is deeper than the limit of 256 levels.' });
    const str = await lines(`{"title":"${'x'.repeat(1500)}"}`, 9, { maxTextBytes: 1000 }).catch(
      (e: unknown) => e as Error,
    );
    expect(str).toMatchObject({ message: 'A JSON string near line 1 exceeds the 1000 bytes size limit.' });
  });
});
