import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../../src/parsers/index.js';
import { RecordPicker, type PickSpec } from '../../../../src/parsers/json/json-record-picker.js';
import { JsonRecordScanner, type JsonPath } from '../../../../src/parsers/json/json-record-scanner.js';

const SPEC: PickSpec = { fields: ['bom-ref', 'name', 'group', 'version', 'purl'], nested: 'components' };
const LIMITS = { maxDepth: 64, maxTokenBytes: 1024, maxRecordBytes: 8192 };

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the picker promises, computed from `JSON.parse`'s whole value (see PickSpec). */
function project(v: Obj): Obj {
  const out: Obj = {};
  for (const f of SPEC.fields)
    if (Object.hasOwn(v, f)) out[f] = typeof v[f] === 'string' || typeof v[f] === 'number' ? v[f] : null;
  if (Object.hasOwn(v, SPEC.nested)) {
    const n = v[SPEC.nested];
    out[SPEC.nested] = Array.isArray(n) ? n.map((c) => (isObject(c) ? project(c) : {})) : [];
  }
  return out;
}

// Components written as a scanner could meet them: escapes in keys and values, raw UTF-8 of
// 2, 3 and 4 bytes, keys in any order, duplicate keys, numbers and other values where strings
// are expected, nested components with elements that are not objects, every whitespace.
const RECORDS = [
  '{"type":"library","bom-ref":"r1","name":"plain","version":"1.0","purl":"pkg:npm/plain@1.0"}',
  '{"purl":"pkg:npm/x@2","version":"2","name":"x","bom-ref":"r2","group":"@scope"}',
  '{"n\\u0061me":"escaped key","bom-ref":"r\\"3\\\\","version":"\\u00e9\\ud83d\\ude00\\n\\t\\/"}',
  '{"name":"caf\u00e9 \u4e2d \ud83d\ude00","description":"braces {}}} [[ \\" quoted },{ ]"}',
  '{"name":"first","name":"second","version":"1","version":{"not":"a string"}}',
  '{"name":{"x":1},"name":"last wins","group":["a"],"purl":null,"bom-ref":true}',
  '{"version":1.50,"name":-0,"group":1e2,"purl":-12.5E-3,"bom-ref":0}',
  '{"name":"lone surrogate \\ud800","bom-ref":"\\u0000"}',
  '{"__proto__":{"name":"proto"},"name":"own"}',
  '{"licenses":[{"license":{"id":"MIT","text":{"content":"x\\\\y"}}}],"hashes":[],"properties":{},"name":"n"}',
  '{}',
  ' {\t"name"\r\n:\n"spaced"  ,"version" : "1" \n}',
  '{"name":"p","components":[{"name":"c1","components":[{"name":"c11"},1,"s",null,[{"name":"in array"}]]},{"name":"c2"}]}',
  '{"name":"p","components":{"name":"not an array"}}',
  '{"name":"p","components":[{"name":"dropped"}],"components":[{"name":"kept"}]}',
  '{"name":"p","components":[{"name":"kept"}],"components":"then not an array"}',
  '{"name":"p","components":[],"x":[true,false,null,0,-1,2.5e+10,{"a":[[]]}]}',
  '{"\\u0063omponents":[{"name":"escaped nested key"}]}',
];

describe('RecordPicker', () => {
  it.each(RECORDS)('reads %s as JSON.parse would', (text) => {
    const buf = Buffer.from(`  ${text}, `);
    const picker = new RecordPicker(SPEC);
    const start = buf.indexOf('{');
    const end = picker.pick(buf, start, buf.length, 64, 1024);
    expect(end).toBe(buf.lastIndexOf(','));
    expect(picker.value).toStrictEqual(project(JSON.parse(text) as Obj));
  });

  it('decodes invalid UTF-8 in a kept string as the record text would', () => {
    const buf = Buffer.concat([
      Buffer.from('{"name":"a'),
      Buffer.from([0xc3, 0x28, 0xe2, 0x82]),
      Buffer.from('"} '),
    ]);
    const picker = new RecordPicker(SPEC);
    expect(picker.pick(buf, 0, buf.length, 64, 1024)).toBe(buf.length - 1);
    expect(picker.value).toStrictEqual(project(JSON.parse(buf.toString('utf8')) as Obj));
  });

  it('counts the newlines it crossed', () => {
    const buf = Buffer.from('{\n "name": "a",\n "x": [\n1]\n}');
    const picker = new RecordPicker(SPEC);
    expect(picker.pick(buf, 0, buf.length, 64, 1024)).toBe(buf.length);
    expect([picker.newlines, picker.lastNewline]).toEqual([4, buf.length - 2]);
  });

  it.each([
    ['a record cut by the end of the buffer', '{"name":"a","x":[1,', 64, 1024],
    ['a number that may go on in the next chunk', '{"name":"a","x":12', 64, 1024],
    ['nesting past the limit', `{"x":${'['.repeat(10)}${']'.repeat(10)}}`, 10, 1024],
    ['nested components past the limit', `{"components":[{"components":[{}]}]}`, 4, 1024],
    ['a string past the limit', `{"name":"${'x'.repeat(20)}"}`, 64, 19],
    ['a trailing comma', '{"name":"a",}', 64, 1024],
    ['a raw control character in a string', '{"name":"a\tb"}', 64, 1024],
    ['a bad escape', '{"name":"\\q"}', 64, 1024],
    ['a short unicode escape', '{"name":"\\u12"}', 64, 1024],
    ['a leading zero', '{"version":01}', 64, 1024],
    ['a bare fraction point', '{"version":1.}', 64, 1024],
    ['a bare minus', '{"version":-}', 64, 1024],
    ['a misspelt literal', '{"x":tru}', 64, 1024],
    ['NaN', '{"x":NaN}', 64, 1024],
    ['single quotes', "{'name':'a'}", 64, 1024],
    ['a missing colon', '{"name" "a"}', 64, 1024],
    ['a missing comma', '{"name":"a" "version":"1"}', 64, 1024],
    ['a byte order mark inside', '{"name":"a",\uFEFF"x":1}', 64, 1024],
    ['a comment', '{"name":"a" /* c */}', 64, 1024],
  ])('leaves %s to the general way', (_name, text, maxDepth, maxString) => {
    const buf = Buffer.from(text);
    expect(new RecordPicker(SPEC).pick(buf, 0, buf.length, maxDepth, maxString)).toBe(-1);
  });

  it('leaves a record past the given limit to the general way', () => {
    const buf = Buffer.from('{"name":"abc"} ');
    expect(new RecordPicker(SPEC).pick(buf, 0, 13, 64, 1024)).toBe(-1);
    expect(new RecordPicker(SPEC).pick(buf, 0, 14, 64, 1024)).toBe(14);
  });
});

/** Scans `text` in chunks of `size` with components picked (`pick`) or parsed whole. */
function scan(text: string, size: number, pick: boolean, limits = LIMITS) {
  const picker = new RecordPicker(SPEC);
  const values: unknown[] = [];
  const scanner = new JsonRecordScanner(
    {
      select: (p: JsonPath) => p.length === 2 && p[0] === 'components' && (pick ? picker : true),
      onValue: (_p, v) => values.push(isObject(v) ? project(v) : v),
    },
    limits,
  );
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) scanner.write(bytes.subarray(i, i + size));
  scanner.end();
  return values;
}

function outcome(text: string, size: number, pick: boolean, limits = LIMITS) {
  try {
    return { values: scan(text, size, pick, limits) };
  } catch (err) {
    expect(err).toBeInstanceOf(ParseError);
    const e = err as ParseError;
    return { error: [e.message, e.line, e.column] };
  }
}

describe('JsonRecordScanner with a picker', () => {
  const doc = `{"bomFormat":"CycloneDX",\n  "components": [\n    ${RECORDS.join(',\n    ')}, "not an object", [1]\n  ],\n  "after": {"x": [1, "\\u0041"]}\n}`;

  it.each([1, 2, 3, 7, 64, 1 << 20])('gives what JSON.parse gives in chunks of %i bytes', (size) => {
    const whole = JSON.parse(doc) as { components: unknown[] };
    expect(scan(doc, size, true)).toStrictEqual(whole.components.map((c) => (isObject(c) ? project(c) : c)));
  });

  it('keeps counting lines after picked records', () => {
    const text = `${doc.slice(0, -2)},\n  "bad": tru\n}`;
    expect(outcome(text, 1 << 20, true)).toStrictEqual(outcome(text, 1 << 20, false));
    expect(outcome(text, 1 << 20, true).error?.[1]).toBe(text.split('\n').length - 1);
  });

  // Each invalid record fails exactly as the whole-record JSON.parse made it fail.
  it.each([
    '{"name":"a",}',
    '{"name":"a"\n,\n "x": tru}',
    '{"name":"a\tb"}',
    '{"name":"\\q"}',
    '{"version":01}',
    '{"version":1.}',
    '{"x":NaN}',
    "{'name':'a'}",
    '{"name" "a"}',
    '{"name":"a",\n\uFEFF"x":1}',
    '{"name":"a" /* c */}',
    '{"name":"a"}}',
    '{"name":"a"',
    `{"x":${'['.repeat(70)}${']'.repeat(70)}}`,
    `{"components":[${'{"components":['.repeat(40)}${']}'.repeat(40)}]}`,
    `{"name":"${'x'.repeat(1100)}"}`,
    `{"x":[${'"0123456789",'.repeat(800)}"x"]}`,
  ])('refuses %s as before, in any chunks', (record) => {
    const text = `{"components":[\n  {"name":"ok"},\n  ${record}\n]}`;
    for (const size of [1, 5, 1 << 20])
      expect(outcome(text, size, true)).toStrictEqual(outcome(text, size, false));
  });

  it('takes the general way past its own recursion bound, with the same result', () => {
    const limits = { ...LIMITS, maxDepth: 5000, maxRecordBytes: 1 << 20 };
    const deep = `{"components":[${'{"components":['.repeat(1000)}{"name":"leaf"}${']}'.repeat(1000)}]}`;
    const picked = outcome(deep, 1 << 20, true, limits);
    expect(picked).toStrictEqual(outcome(deep, 1 << 20, false, limits));
    expect(picked.values).toHaveLength(1);
  });
});
