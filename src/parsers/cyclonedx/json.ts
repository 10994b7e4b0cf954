import { boundExcerpt, type ParserContext } from '../format-parser.js';
import {
  ComponentIndex,
  MAX_INDEXED_COMPONENTS,
  cdxFindings,
  cdxSubject,
  ratingScore,
  type CdxComponent,
  type CdxVulnerability,
} from './common.js';
import { RecordPicker } from '../json/json-record-picker.js';
import type { JsonPath } from '../json/walk-json.js';
import type { JsonHandler } from '../json/walk-json.js';
import type { FindingDraft } from '../types.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | null =>
  typeof v === 'string' && v.trim() !== '' ? v : typeof v === 'number' ? String(v) : null;

/**
 * CycloneDX JSON, streamed: `components[i]` (with nested components), `metadata.component`,
 * `metadata.tools` and `vulnerabilities[i]` are assembled one at a time. Vulnerabilities that
 * arrive while the `components` array may still be ahead are held until the document ends (the
 * schema order puts components first, so in practice nothing is held).
 */
export class CyclonedxJsonHandler implements JsonHandler {
  out: FindingDraft[] = [];
  // JSON.parse's strings are copies of their own, never slices of the record's text.
  private readonly components = new ComponentIndex(MAX_INDEXED_COMPONENTS, { copyStrings: false });
  private componentsDone = false;
  private held: CdxVulnerability[] = [];
  private vulnerabilities = 0;
  private scanner = 'CycloneDX';
  /** A component's fields that `indexComponent` reads, and its nested components. */
  private readonly componentPicker = new RecordPicker({
    fields: ['bom-ref', 'name', 'group', 'version', 'purl'],
    nested: 'components',
  });

  constructor(private readonly ctx: ParserContext) {}

  select(path: JsonPath): boolean | RecordPicker {
    if (path.length === 2 && path[0] === 'components') return this.componentPicker;
    if (path.length === 2 && path[0] === 'vulnerabilities') return true;
    return path.length === 2 && path[0] === 'metadata' && (path[1] === 'component' || path[1] === 'tools');
  }

  onValue(path: JsonPath, value: unknown): void {
    if (path[1] === 'component') this.ctx.scope.addSubject(cdxSubject(this.indexComponent(obj(value))));
    else if (path[0] === 'components') this.indexComponent(obj(value));
    else if (path[1] === 'tools') this.scanner = toolName(value) ?? this.scanner;
    else {
      const v = this.toVulnerability(obj(value));
      this.vulnerabilities++;
      if (this.componentsDone) this.out.push(...cdxFindings(v, this.components, this.scanner));
      else this.held.push(v);
    }
  }

  onContainerEnd(path: JsonPath): void {
    if (path.length === 1 && path[0] === 'components') {
      this.componentsDone = true;
      for (const v of this.held.splice(0)) this.out.push(...cdxFindings(v, this.components, this.scanner));
    }
  }

  end(): void {
    for (const v of this.held.splice(0)) this.out.push(...cdxFindings(v, this.components, this.scanner));
    this.ctx.scope.addScanner(this.scanner);
    const bound = this.components.boundNote();
    if (bound) this.ctx.notes.push(bound);
    if (this.vulnerabilities === 0) {
      this.ctx.notes.push(
        this.components.count > 0
          ? `BOM has ${this.components.count} components but no vulnerabilities`
          : 'BOM has no components and no vulnerabilities',
      );
    }
  }

  private indexComponent(c: Obj): CdxComponent {
    const comp: CdxComponent = {
      name: str(c.name),
      group: str(c.group),
      version: str(c.version),
      purl: str(c.purl),
    };
    this.components.add(str(c['bom-ref']), comp);
    for (const child of arr(c.components)) this.indexComponent(obj(child));
    return comp;
  }

  private toVulnerability(v: Obj): CdxVulnerability {
    return {
      id: str(v.id),
      cveRefs: arr(v.references).map((r) => str(obj(r).id) ?? ''),
      ratings: arr(v.ratings).map((r) => {
        const o = obj(r);
        return {
          score: ratingScore(o.score),
          severity: str(o.severity),
          method: str(o.method),
          vector: str(o.vector),
        };
      }),
      cwes: arr(v.cwes).map((c) => String(c)),
      description: str(v.description),
      detail: str(v.detail),
      recommendation: str(v.recommendation),
      analysisState: str(obj(v.analysis).state),
      affects: arr(v.affects)
        .map((a) => str(obj(a).ref) ?? '')
        .filter((r) => r !== ''),
      rawExcerpt: boundExcerpt(JSON.stringify(v), this.ctx.limits.maxExcerptBytes),
    };
  }
}

/** metadata.tools is an array of tools (1.2–1.4) or `{components: [...]}` (1.5+). */
function toolName(tools: unknown): string | null {
  const list = Array.isArray(tools) ? tools : arr(obj(tools).components);
  const first = obj(list[0]);
  return str(first.name);
}
