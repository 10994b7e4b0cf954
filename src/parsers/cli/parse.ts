import {
  boundExcerpt,
  extractCves,
  isIpAddress,
  nonEmpty,
  normaliseCwe,
  parsePort,
  uniq,
  type FormatParser,
  type ParserContext,
} from '../format-parser.js';
import { prependChunk } from '../input-stream.js';
import { isToolLine } from './sniff.js';
import type { JsonPath } from '../json/walk-json.js';
import { walkJson, type JsonHandler } from '../json/walk-json.js';
import { walkJsonLines } from '../json/walk-json-lines.js';
import { unparseable } from '../parse-error.js';
import { parseScore, severityFromCvss, severityFromText } from '../severity.js';
import type { FindingDraft } from '../types.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | null =>
  typeof v === 'string' ? nonEmpty(v) : typeof v === 'number' ? String(v) : null;
const list = (v: unknown): string[] =>
  Array.isArray(v)
    ? v.map((x) => str(x)).filter((x): x is string => x !== null)
    : typeof v === 'string'
      ? [v]
      : [];

/** `location` is "path", "path:line", or `{path|file|uri, line|startLine, port, protocol}`. */
function parseLocation(loc: unknown): {
  file: string | null;
  line: number | null;
  port: number | null;
  protocol: string | null;
} {
  if (typeof loc === 'string') {
    const m = /^(.*?):(\d+)(?::\d+)?$/.exec(loc.trim());
    return m
      ? { file: m[1]!, line: Number(m[2]), port: null, protocol: null }
      : { file: nonEmpty(loc), line: null, port: null, protocol: null };
  }
  const o = obj(loc);
  const line = Number(o.line ?? o.startLine);
  return {
    file: str(o.path) ?? str(o.file) ?? str(o.uri),
    line: Number.isInteger(line) && line > 0 ? line : null,
    port: parsePort(o.port as string | number | undefined),
    protocol: str(o.protocol),
  };
}

/**
 * CLI findings (docs/ingestion.md#formats): `{"tool": {"name", "version"}, "findings": [...]}` or JSON Lines
 * with one finding per line, optionally after a first line `{"tool": {"name", "version"}}` that
 * names the scanner (as the document form does). Only `title` is required; a finding without one is a broken upload,
 * reported with its position rather than silently dropped.
 */
export class CliHandler implements JsonHandler {
  out: FindingDraft[] = [];
  private scanner: string | null = null;
  private held: { value: Obj; n: number }[] = [];
  private n = 0;
  /** Lines before the first finding (the tool line): error positions count them. */
  private skipped = 0;

  constructor(
    private readonly ctx: ParserContext,
    private readonly lines: boolean,
    private toolLinePending = false,
  ) {}

  select(path: JsonPath): boolean {
    if (this.lines) return path.length === 0;
    return (path.length === 1 && path[0] === 'tool') || (path.length === 2 && path[0] === 'findings');
  }

  onValue(path: JsonPath, value: unknown): void {
    if (this.toolLinePending) {
      this.toolLinePending = false;
      this.skipped = 1;
      const tool = obj(value).tool;
      this.scanner = str(obj(tool).name) ?? str(tool) ?? 'CLI';
      return;
    }
    if (path[0] === 'tool') {
      this.scanner = str(obj(value).name) ?? 'CLI';
      for (const h of this.held.splice(0)) this.out.push(this.toDraft(h.value, h.n));
      return;
    }
    const n = this.n++;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw unparseable(`Finding ${n + 1} is not a JSON object.`, this.lines ? n + 1 + this.skipped : null);
    }
    // In the document form "tool" normally comes first; findings before it wait for the name.
    if (this.lines || this.scanner !== null) this.out.push(this.toDraft(value as Obj, n));
    else this.held.push({ value: value as Obj, n });
  }

  end(): void {
    this.scanner ??= 'CLI';
    this.ctx.scope.addScanner(this.scanner);
    for (const h of this.held.splice(0)) this.out.push(this.toDraft(h.value, h.n));
  }

  private toDraft(f: Obj, n: number): FindingDraft {
    const title = str(f.title);
    if (!title)
      throw unparseable(`Finding ${n + 1} has no "title".`, this.lines ? n + 1 + this.skipped : null);
    const loc = parseLocation(f.location);
    const assetObj = obj(f.asset);
    const assetText = typeof f.asset === 'string' ? nonEmpty(f.asset) : null;
    const host = assetText ?? str(assetObj.host) ?? str(assetObj.hostname) ?? str(assetObj.name);
    const ip = str(assetObj.ip) ?? (isIpAddress(host) ? host : null);
    const score = parseScore(str(f.cvssScore));
    const fallback = score !== null ? severityFromCvss(score) : 'INFO';
    return {
      scanner: str(f.tool) ?? this.scanner ?? 'CLI',
      ruleId: str(f.ruleId) ?? str(f.rule) ?? str(f.id),
      title,
      severity: severityFromText(str(f.severity), fallback),
      cveIds: uniq(list(f.cveIds).flatMap((c) => extractCves(c))),
      cweIds: uniq(list(f.cweIds).map((c) => normaliseCwe(c))),
      cvssScore: score,
      cvssVector: str(f.cvssVector),
      description: str(f.description),
      solution: str(f.solution) ?? str(f.remediation),
      asset: {
        host,
        ip,
        fqdn: str(assetObj.fqdn),
        os: str(assetObj.os),
        component: str(f.component) ?? str(assetObj.component),
        componentVersion: str(f.componentVersion) ?? str(assetObj.version),
        purl: str(f.purl) ?? str(assetObj.purl),
        file: loc.file,
        line: loc.line,
      },
      port: loc.port ?? parsePort(f.port as string | number | undefined),
      protocol: loc.protocol ?? str(f.protocol),
      rawExcerpt: boundExcerpt(JSON.stringify(f), this.ctx.limits.maxExcerptBytes),
    };
  }
}

const DOCUMENT_KEYS = new Set(['tool', 'findings', 'version', '$schema', 'schemaVersion', 'metadata']);

/** True when the first line is a whole `{"tool": …}` object and another object follows it. */
function startsWithToolLine(head: string): boolean {
  const nl = head.indexOf('\n');
  if (nl < 0) return false;
  try {
    const v = JSON.parse(head.slice(0, nl)) as unknown;
    return (
      typeof v === 'object' &&
      v !== null &&
      !Array.isArray(v) &&
      isToolLine(v as Record<string, unknown>) &&
      head
        .slice(nl + 1)
        .trimStart()
        .startsWith('{')
    );
  } catch {
    return false;
  }
}

/** Parses CLI findings JSON or JSON Lines; the first key of the first object tells them apart. */
export const parseCli: FormatParser = async function* (chunks, ctx) {
  const it = chunks[Symbol.asyncIterator]();
  const first = await it.next();
  const head = first.done
    ? ''
    : first.value.toString('utf8', 0, Math.min(first.value.length, 4096)).replace(/^\uFEFF/, '');
  const firstKey = /^\s*\{\s*"((?:[^"\\]|\\.)*)"/.exec(head)?.[1];
  const toolLine = firstKey === 'tool' && startsWithToolLine(head);
  const lines = toolLine || (firstKey !== undefined && !DOCUMENT_KEYS.has(firstKey));
  const input = prependChunk(first.done ? null : first.value, it);
  const handler = new CliHandler(ctx, lines, toolLine);
  yield* lines ? walkJsonLines(input, handler, ctx) : walkJson(input, handler, ctx);
};
