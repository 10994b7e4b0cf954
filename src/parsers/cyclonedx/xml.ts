import type { ParserContext } from '../format-parser.js';
import {
  ComponentIndex,
  cdxFindings,
  cdxSubject,
  ratingScore,
  type CdxComponent,
  type CdxRating,
  type CdxVulnerability,
} from './common.js';
import type { FindingDraft } from '../types.js';
import type { XmlHandler, XmlWalker } from '../xml/xml-walker.js';

interface ComponentFrame {
  depth: number;
  ref: string | null;
  fields: Map<string, string>;
  indexed: boolean;
}

interface VulnFrame {
  depth: number;
  /** Set for the 1.x vulnerability extension: the enclosing component or the `ref` attribute. */
  extensionRef: string | null;
  fields: Map<string, string>;
  refs: string[];
  cwes: string[];
  affects: string[];
  ratings: CdxRating[];
  rating: CdxRating | null;
}

/**
 * CycloneDX XML 1.0–1.6 (docs/ingestion.md#formats). Handles top-level `bom/vulnerabilities/vulnerability`
 * (1.4+) and the older vulnerability extension (`v:vulnerabilities` inside a component, or at
 * bom level with a `ref` attribute); prefixes are stripped by the walker, so both arrive as
 * `vulnerability`. Components precede vulnerabilities in the schema, so each vulnerability is
 * resolved and emitted when it closes.
 */
export class CyclonedxXmlHandler implements XmlHandler {
  readonly roots = ['bom'];
  out: FindingDraft[] = [];
  private readonly components = new ComponentIndex();
  private readonly componentStack: ComponentFrame[] = [];
  private vuln: VulnFrame | null = null;
  private vulnerabilities = 0;
  private scanner = 'CycloneDX';

  constructor(private readonly ctx: ParserContext) {}

  open(name: string, attrs: Record<string, string>, path: readonly string[], walker: XmlWalker): void {
    if (this.vuln) {
      if (name === 'rating') this.vuln.rating = { score: null, severity: null, method: null, vector: null };
      return;
    }
    if (name === 'component') {
      this.componentStack.push({
        depth: path.length,
        ref: attrs['bom-ref'] ?? null,
        fields: new Map(),
        indexed: false,
      });
    } else if (name === 'vulnerability' && path[path.length - 2] === 'vulnerabilities') {
      const enclosing = this.componentStack[this.componentStack.length - 1];
      // The extension nests vulnerabilities after the component's own fields, so the component
      // can be indexed now, before it closes.
      if (enclosing) this.indexComponent(enclosing);
      const extensionRef =
        attrs.ref ??
        (enclosing
          ? (enclosing.ref ?? enclosing.fields.get('purl') ?? enclosing.fields.get('name') ?? null)
          : null);
      this.vuln = {
        depth: path.length,
        extensionRef,
        fields: new Map(),
        refs: [],
        cwes: [],
        affects: [],
        ratings: [],
        rating: null,
      };
      walker.beginExcerpt();
    }
  }

  close(name: string, text: string, path: readonly string[], walker: XmlWalker): void {
    const v = this.vuln;
    if (v) {
      if (path.length === v.depth) this.finishVulnerability(v, walker.endExcerpt());
      else this.vulnField(v, name, text.trim(), path);
      return;
    }
    if (path.length === 1) {
      this.end();
      return;
    }
    const top = this.componentStack[this.componentStack.length - 1];
    if (top && path.length === top.depth + 1) top.fields.set(name, text.trim());
    else if (name === 'component' && top && path.length === top.depth) {
      this.componentStack.pop();
      this.indexComponent(top);
      if (path.length === 3 && path[1] === 'metadata')
        this.ctx.scope.addSubject(cdxSubject(componentOf(top)));
    } else if (name === 'name' && path[path.length - 2] === 'tool' && text.trim() !== '') {
      this.scanner = text.trim();
    }
  }

  /** Called when the root closes: records the components-only note. */
  private end(): void {
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

  private indexComponent(frame: ComponentFrame): void {
    if (frame.indexed) return;
    frame.indexed = true;
    const f = frame.fields;
    this.components.add(frame.ref ?? f.get('name') ?? null, componentOf(frame));
  }

  private vulnField(v: VulnFrame, name: string, text: string, path: readonly string[]): void {
    const parent = path[path.length - 2];
    // Depth below the vulnerability, compared segment by segment: a vulnerability closes ~60
    // elements (advisory URLs), and joining each path cost a tenth of the parse.
    const below = path.length - v.depth;
    if (v.rating && parent === 'rating') {
      if (name === 'score') v.rating.score = ratingScore(text) ?? v.rating.score;
      else if (name === 'severity') v.rating.severity = text || null;
      else if (name === 'method') v.rating.method = text || null;
      else if (name === 'vector') v.rating.vector = text || null;
    } else if (v.rating && parent === 'score' && name === 'base') {
      v.rating.score = ratingScore(text); // 1.x extension: <score><base>9.8</base></score>
    } else if (name === 'rating') {
      if (v.rating) v.ratings.push(v.rating);
      v.rating = null;
    } else if (below === 3 && name === 'id' && parent === 'reference' && path[v.depth] === 'references')
      v.refs.push(text);
    else if (name === 'cwe' && parent === 'cwes') v.cwes.push(text);
    else if (name === 'ref' && parent === 'target') v.affects.push(text);
    else if (below === 2 && name === 'state' && parent === 'analysis') v.fields.set('analysisState', text);
    else if (below === 1) v.fields.set(name, text);
  }

  private finishVulnerability(v: VulnFrame, rawExcerpt: string): void {
    this.vulnerabilities++;
    const f = v.fields;
    const recommendation = f.get('recommendation') ?? f.get('recommendations') ?? null;
    const vuln: CdxVulnerability = {
      id: f.get('id') || null,
      cveRefs: v.refs,
      ratings: v.ratings,
      cwes: v.cwes,
      description: f.get('description') ?? null,
      detail: f.get('detail') ?? null,
      recommendation,
      analysisState: f.get('analysisState') ?? null,
      affects: v.affects.length > 0 ? v.affects : v.extensionRef ? [v.extensionRef] : [],
      rawExcerpt,
    };
    this.out.push(...cdxFindings(vuln, this.components, this.scanner));
    this.vuln = null;
  }
}

function componentOf(frame: ComponentFrame): CdxComponent {
  const f = frame.fields;
  return {
    name: f.get('name') || null,
    group: f.get('group') || null,
    version: f.get('version') || null,
    purl: f.get('purl') || null,
  };
}
