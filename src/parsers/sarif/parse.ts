import {
  boundExcerpt,
  extractAliases,
  extractCves,
  nonEmpty,
  normaliseCwe,
  uniq,
  type FormatParser,
  type ParserContext,
} from '../format-parser.js';
import type { JsonPath } from '../json/walk-json.js';
import { walkJson, type JsonHandler } from '../json/walk-json.js';
import { severityFromSarifLevel, severityFromSecuritySeverity } from '../severity.js';
import { sarifMessage, type SarifRule, type SarifTool, SarifRuleIndex } from './rules.js';
import type { FindingDraft } from '../types.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);

/**
 * SARIF 2.1.0 (docs/ingestion.md#formats), streamed: only `runs[i].tool` and each `runs[i].results[j]` are
 * assembled. Producers write `tool` before `results` (the schema's order); if a file puts results
 * first, those results are held until the run's tool arrives or the run ends, which is the one
 * case where memory grows with the file.
 */
export class SarifHandler implements JsonHandler {
  out: FindingDraft[] = [];
  private run = -1;
  private rules: SarifRuleIndex | null = null;
  private scanner = 'SARIF';
  private waiting: Obj[] = [];

  constructor(private readonly ctx: ParserContext) {}

  select(path: JsonPath): boolean {
    return (
      path.length >= 3 &&
      path[0] === 'runs' &&
      (path[2] === 'tool' || path[2] === 'versionControlProvenance'
        ? path.length === 3
        : path[2] === 'results' && path.length === 4)
    );
  }

  onValue(path: JsonPath, value: unknown): void {
    const run = path[1] as number;
    if (run !== this.run) this.startRun(run);
    if (path[2] === 'versionControlProvenance') {
      // The repository the run analysed: the subject of a rescan's scope (docs/ingestion.md#rescans).
      for (const v of arr(value)) this.ctx.scope.addSubject(str(obj(v).repositoryUri));
    } else if (path[2] === 'tool') {
      const tool = obj(value) as SarifTool;
      this.rules = new SarifRuleIndex(tool);
      this.scanner = str(obj(tool.driver).name) ?? 'SARIF';
      this.ctx.scope.addScanner(this.scanner);
      for (const r of this.waiting.splice(0)) this.emit(r);
    } else if (this.rules) {
      this.emit(obj(value));
    } else {
      this.waiting.push(obj(value));
    }
  }

  onContainerEnd(path: JsonPath): void {
    if (path.length === 2 && path[0] === 'runs') this.endRun();
  }

  end(): void {
    this.endRun();
  }

  private startRun(run: number): void {
    this.endRun();
    this.run = run;
    this.rules = null;
    this.scanner = 'SARIF';
  }

  private endRun(): void {
    if (this.waiting.length === 0) return;
    this.rules ??= new SarifRuleIndex({});
    for (const r of this.waiting.splice(0)) this.emit(r);
  }

  private emit(result: Obj): void {
    const rule: SarifRule = this.rules!.find(result);
    const ruleId = str(result.ruleId) ?? str(obj(result.rule).id) ?? str(rule.id);
    const props = obj(result.properties);
    const ruleProps = obj(rule.properties);
    const scoreText = props['security-severity'] ?? ruleProps['security-severity'];
    const score = scoreText === undefined || scoreText === null ? NaN : Number.parseFloat(String(scoreText));
    const level = str(result.level) ?? str(obj(rule.defaultConfiguration).level) ?? undefined;
    const message = sarifMessage(obj(result.message), rule);
    const loc = obj(obj(arr(result.locations)[0]).physicalLocation);
    const region = obj(loc.region);
    const tags = arr(ruleProps.tags).concat(arr(props.tags)).map(String);
    const relationships = arr(rule.relationships).map((r) => str(obj(obj(r).target).id));
    const fps = { ...stringMap(result.partialFingerprints), ...stringMap(result.fingerprints) };
    const suppressions = arr(result.suppressions).map(obj);
    const shortText = str(obj(rule.shortDescription).text);
    this.out.push({
      scanner: this.scanner,
      ruleId,
      title: shortText ?? str(rule.name) ?? firstLine(message) ?? ruleId ?? 'SARIF result',
      severity: Number.isFinite(score) ? severityFromSecuritySeverity(score) : severityFromSarifLevel(level),
      cveIds: uniq([ruleId, str(rule.name), shortText, ...tags].flatMap((t) => extractCves(t))),
      aliases: uniq(
        [ruleId, str(rule.name), shortText, ...tags, ...ruleAliases(ruleProps)].flatMap((t) =>
          extractAliases(t),
        ),
      ),
      cweIds: uniq(
        [...tags, ...relationships, shortText]
          .flatMap((t) => (t ?? '').match(/cwe[-/_:]?0*\d+/gi) ?? [])
          .map((t) => normaliseCwe(t)),
      ),
      description: str(obj(rule.fullDescription).text) ?? shortText ?? message,
      solution: str(obj(rule.help).text),
      evidence: message,
      asset: {
        file: str(obj(loc.artifactLocation).uri),
        line: typeof region.startLine === 'number' ? region.startLine : null,
      },
      // A suppression whose status is "rejected" means the suppression request was turned down.
      suppressed: suppressions.some((s) => s.status !== 'rejected'),
      producerFingerprints: Object.keys(fps).length > 0 ? fps : null,
      rawExcerpt: boundExcerpt(JSON.stringify(result), this.ctx.limits.maxExcerptBytes),
    });
  }
}

function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(obj(v))) if (typeof val === 'string') out[k] = val;
  return out;
}

function firstLine(text: string | null): string | null {
  const line = nonEmpty(text?.split('\n')[0]);
  return line && line.length > 200 ? `${line.slice(0, 197)}...` : line;
}

/** Parses a SARIF 2.1.0 log (every run). */
export const parseSarif: FormatParser = (chunks, ctx) => walkJson(chunks, new SarifHandler(ctx), ctx);

/**
 * The string values of a rule's properties (`aliases`, `ghsa`, `references`, … as producers name
 * them), at most 50: where SARIF producers put a vulnerability's advisory ids besides its tags.
 */
function ruleAliases(props: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [key, v] of Object.entries(props)) {
    if (key === 'tags') continue;
    for (const x of Array.isArray(v) ? v : [v]) if (typeof x === 'string' && out.length < 50) out.push(x);
  }
  return out;
}
