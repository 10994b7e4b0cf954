/**
 * What the streaming parsers are compared with, in the same run (`run-one.ts` modes `dom` and
 * `tokens`):
 * - whole document: the file read into one string and parsed into a tree, fast-xml-parser for
 *   XML and `JSON.parse` for JSON (V8 strings stop at about 512 MiB, so JSON at 100 MB only).
 *   JSON Lines has no whole document: `JSON.parse` of each line, read in chunks, is the natural
 *   baseline there. Each returns the findings it can count in the tree (no normalisation), so the
 *   counts can be checked against the streaming parser's.
 * - tokenizer floor: the tokenizer the streaming parser runs on (saxes, stream-json's), with no
 *   handler work, over the same decoded chunks: what no extraction code can go below.
 */
import { createReadStream, readFileSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { TextDecoder } from 'node:util';
import { XMLParser } from 'fast-xml-parser';
import { JsonTokenizer } from '../../src/parsers/json/json-tokenizer.js';
import { createXmlEngine } from '../../src/parsers/xml/xml-engine.js';
import { FORMATS, type BenchFormat } from './formats.js';

type Obj = Record<string, unknown>;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);

/** Counts elements named `name` anywhere in a fast-xml-parser result. */
function countDeep(node: unknown, name: string): number {
  if (Array.isArray(node)) return node.reduce((s: number, n) => s + countDeep(n, name), 0);
  if (typeof node !== 'object' || node === null) return 0;
  let n = 0;
  for (const [k, v] of Object.entries(node)) {
    if (k === name) n += Array.isArray(v) ? v.length : 1;
    n += countDeep(v, name);
  }
  return n;
}

/** CycloneDX: one finding per vulnerability × distinct affected ref, at least one per vulnerability. */
function cdxCount(vulns: unknown[], refs: (v: Obj) => unknown[]): number {
  return vulns.reduce((s: number, v) => s + Math.max(1, new Set(refs(v as Obj)).size), 0);
}

const FIND_IN_TREE: Readonly<Record<BenchFormat, (doc: unknown) => number>> = {
  nessus: (doc) => countDeep(doc, 'ReportItem'),
  qualys: (doc) => countDeep(doc, 'VULN_INFO'),
  'qualys-scan': (doc) => ['VULN', 'PRACTICE', 'INFO'].reduce((s, n) => s + countDeep(doc, n), 0),
  'qualys-detection': (doc) => countDeep(doc, 'DETECTION'),
  openvas: (doc) => countDeep(doc, 'result'),
  'cyclonedx-xml': (doc) => {
    const bom = (doc as Obj).bom as Obj;
    const vulns = list((bom.vulnerabilities as Obj | undefined)?.vulnerability);
    return cdxCount(vulns, (v) => list((v.affects as Obj | undefined)?.target).map((t) => (t as Obj).ref));
  },
  sarif: (doc) => list((doc as Obj).runs).reduce((s: number, r) => s + list((r as Obj).results).length, 0),
  'cyclonedx-json': (doc) =>
    cdxCount(list((doc as Obj).vulnerabilities), (v) => list(v.affects).map((a) => (a as Obj).ref)),
  cli: () => 0,
  'cli-json': (doc) => list((doc as Obj).findings).length,
};

async function jsonLines(file: string): Promise<number> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let count = 0;
  const take = (text: string) => {
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      const line = text.slice(start, nl);
      start = nl + 1;
      if (line.trim() !== '' && JSON.parse(line) !== null) count++;
    }
    return text.slice(start);
  };
  for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 }))
    rest = take(rest + decoder.write(chunk as Buffer));
  take(`${rest}${decoder.end()}\n`);
  return count;
}

/** The whole-document baseline of the format; resolves to the findings it counted. */
export async function wholeDocument(format: BenchFormat, file: string): Promise<number> {
  const kind = FORMATS[format].baseline;
  if (kind === 'json-lines') return jsonLines(file);
  const text = readFileSync(file, 'utf8');
  const doc: unknown =
    kind === 'json-parse'
      ? JSON.parse(text)
      : new XMLParser({ ignoreAttributes: false, processEntities: false }).parse(text);
  return FIND_IN_TREE[format](doc);
}

/** The tokenizer floor of the format; resolves to the tokens (JSON) or elements (XML) it saw. */
export async function tokenizerOnly(format: BenchFormat, file: string): Promise<number> {
  let count = 0;
  const chunks = createReadStream(file, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>;
  if (FORMATS[format].ext === 'xml') {
    const engine = createXmlEngine('saxes', {
      open: () => void count++,
      close: () => undefined,
      text: () => undefined,
      doctype: () => undefined,
    });
    const decoder = new StringDecoder('utf8');
    for await (const chunk of chunks) engine.write(decoder.write(chunk));
    engine.write(decoder.end());
    engine.close();
    return count;
  }
  const tokenizer = new JsonTokenizer(8 * 1024 * 1024, FORMATS[format].baseline === 'json-lines');
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of chunks) count += tokenizer.write(decoder.decode(chunk, { stream: true })).length;
  count += tokenizer.write(decoder.decode()).length + tokenizer.end().length;
  return count;
}
