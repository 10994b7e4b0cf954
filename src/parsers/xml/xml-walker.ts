import { ParseError, unparseable } from '../parse-error.js';
import { formatSize } from '../json/json-tokenizer.js';
import type { ParserContext } from '../format-parser.js';
import type { FindingDraft, ParseLimits } from '../types.js';
import { XmlSyntaxError, createXmlEngine, type XmlEngine } from './xml-engine.js';
import { RawExcerpt, serialiseOpenTag } from './raw-excerpt.js';

/**
 * Format-specific logic on top of the walker. `path` holds local names from the root to the
 * current element inclusive; `text` is the element's own (direct) text, so mixed content such as
 * OpenVAS `<host>10.0.0.1<hostname>a</hostname></host>` gives "10.0.0.1" for host.
 */
export interface XmlHandler {
  /** Root element local names this format accepts. */
  readonly roots: readonly string[];
  /** Drafts completed so far; the walker drains it after each chunk. */
  out: FindingDraft[];
  open(name: string, attrs: Record<string, string>, path: readonly string[], walker: XmlWalker): void;
  close(name: string, text: string, path: readonly string[], walker: XmlWalker): void;
  /** Called after each input chunk, e.g. to flush a spill file with backpressure. */
  afterChunk?(): Promise<void>;
  /** Yields drafts that can only be produced after the whole document (Qualys glossary join). */
  finish?(): AsyncGenerator<FindingDraft[], void, undefined>;
  /** Releases resources (temp files) whether the parse completed, failed or was abandoned. */
  dispose?(): Promise<void>;
}

/** Input is fed to the tokenizer in slices of this size so limits are checked at this granularity. */
const SLICE_CHARS = 64 * 1024;

const localName = (qname: string): string => {
  const i = qname.indexOf(':');
  return i < 0 ? qname : qname.slice(i + 1);
};

/**
 * Streams XML through a SAX tokenizer with the safety rules of docs/ingestion.md#parsing: no DTD is fetched
 * (neither tokenizer can), a DOCTYPE declaring entities is refused so `&x;` can never expand
 * (XXE, billion laughs), and depth, text and token sizes are bounded so hostile input fails
 * with a ParseError instead of exhausting memory.
 */
export class XmlWalker {
  private readonly engine: XmlEngine;
  private readonly path: string[] = [];
  private readonly texts: string[] = [];
  private events = 0;
  private charsWithoutEvent = 0;
  private sawRoot = false;
  private excerpt: RawExcerpt | null = null;
  private lastAttrs: Record<string, string> = {};
  /** The slice being tokenized and the one before it, with their absolute start positions. */
  private cur = '';
  private curStart = 0;
  private prev = '';
  private prevStart = 0;

  constructor(
    private readonly handler: XmlHandler,
    private readonly limits: ParseLimits,
    engineName: ParserContext['xmlEngine'],
  ) {
    this.engine = createXmlEngine(engineName, {
      open: (name, attrs) => this.onOpen(name, attrs),
      close: (name) => this.onClose(name),
      text: (t) => this.onText(t),
      doctype: (t) => this.onDoctype(t),
    });
  }

  /**
   * Starts capturing the raw text of the current element (call from `open`). The tokenizer is
   * just past the open tag's `>`; its `<` is the last one before, because `<` cannot occur inside
   * a tag. Only when the tag began before the previous slice (a tag over 64 Ki characters) is it
   * rebuilt from the parsed attributes.
   */
  beginExcerpt(): void {
    const maxChars = this.limits.maxExcerptBytes + 1;
    const pos = this.engine.position();
    const inCur = pos - this.curStart - 1 >= 0 ? this.cur.lastIndexOf('<', pos - this.curStart - 1) : -1;
    if (inCur >= 0) {
      this.excerpt = new RawExcerpt(this.curStart + inCur, maxChars);
      return;
    }
    const inPrev = this.prev.lastIndexOf('<');
    if (inPrev >= 0) {
      this.excerpt = new RawExcerpt(this.prevStart + inPrev, maxChars);
      this.excerpt.take(this.prev, this.prevStart, this.curStart);
      return;
    }
    const name = this.path[this.path.length - 1] ?? '';
    this.excerpt = new RawExcerpt(pos, maxChars, serialiseOpenTag(name, this.lastAttrs));
  }

  /**
   * Stops capturing and returns the element's raw text, at most `maxExcerptBytes + 1` characters
   * (call from `close`); the caller bounds it in bytes and marks a cut.
   */
  endExcerpt(): string {
    const excerpt = this.excerpt;
    if (!excerpt) return '';
    excerpt.take(this.cur, this.curStart, this.engine.position());
    this.excerpt = null;
    return excerpt.finish();
  }

  /** Feeds decoded text. */
  write(text: string): void {
    for (let i = 0; i < text.length; i += SLICE_CHARS) {
      const slice = text.length <= SLICE_CHARS ? text : text.slice(i, i + SLICE_CHARS);
      this.excerpt?.take(this.cur, this.curStart, Infinity);
      this.prev = this.cur;
      this.prevStart = this.curStart;
      this.curStart += this.cur.length;
      this.cur = slice;
      const before = this.events;
      this.guard(() => this.engine.write(slice));
      if (this.events === before) {
        this.charsWithoutEvent += slice.length;
        if (this.charsWithoutEvent > this.limits.maxTextBytes) {
          throw this.at(
            `An XML token (tag, attribute value, text, comment or DOCTYPE) is larger than the ${formatSize(this.limits.maxTextBytes)} limit`,
          );
        }
      } else {
        this.charsWithoutEvent = 0;
      }
    }
  }

  /** Ends the document; throws when it is truncated or empty. */
  end(): void {
    if (!this.sawRoot && this.path.length === 0) {
      throw unparseable(
        'The file contains no XML root element (empty or not XML).',
        this.engine.line(),
        this.engine.column(),
      );
    }
    if (this.path.length > 0) {
      throw this.at(`The XML ends inside <${this.path[this.path.length - 1]}> (truncated file?)`);
    }
    this.guard(() => this.engine.close());
  }

  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      if (err instanceof ParseError) {
        throw err.line === null
          ? new ParseError(err.code, err.message, { line: this.engine.line(), column: this.engine.column() })
          : err;
      }
      if (!(err instanceof XmlSyntaxError)) throw err;
      const raw = err.message
        .split('\n')[0]!
        .replace(/^[^:]*:\d+:\d+: /, '')
        .replace(/^\d+:\d+: /, '');
      // saxes does not name the entity; only the five XML entities and character references are known.
      const detail = /undefined entity/i.test(raw)
        ? 'it references an undefined entity (only &lt; &gt; &amp; &apos; &quot; and character references are known); DTD-declared entities are never expanded'
        : raw.replace(/\.$/, '');
      throw this.at(`The XML is not well-formed: ${detail}`);
    }
  }

  private at(message: string): ParseError {
    const line = this.engine.line();
    const column = this.engine.column();
    return unparseable(`${message} (line ${line}, column ${column}).`, line, column);
  }

  private onDoctype(text: string): void {
    this.events++;
    if (/<!ENTITY/i.test(text)) {
      throw this.at(
        'The DOCTYPE declares entities (<!ENTITY>); entity declarations are refused to prevent external-entity and entity-expansion attacks',
      );
    }
  }

  private onOpen(qname: string, attrs: Record<string, string>): void {
    this.events++;
    const name = localName(qname);
    if (this.path.length >= this.limits.maxDepth) {
      throw this.at(`XML nesting is deeper than the limit of ${this.limits.maxDepth} elements`);
    }
    for (const key in attrs) {
      if (attrs[key]!.length > this.limits.maxTextBytes) {
        throw this.at(
          `The attribute "${key}" of <${name}> is larger than the ${formatSize(this.limits.maxTextBytes)} limit`,
        );
      }
    }
    if (this.path.length === 0) {
      if (this.sawRoot) throw this.at('The XML has more than one root element');
      if (!this.handler.roots.includes(name)) {
        throw this.at(`Expected root element <${this.handler.roots.join('> or <')}> but found <${name}>`);
      }
      this.sawRoot = true;
    }
    this.path.push(name);
    this.texts.push('');
    this.lastAttrs = attrs;
    this.handler.open(name, attrs, this.path, this);
  }

  private onClose(qname: string): void {
    this.events++;
    const name = localName(qname);
    const text = this.texts.pop() ?? '';
    this.handler.close(name, text, this.path, this);
    this.path.pop();
  }

  private onText(text: string): void {
    this.events++;
    if (this.path.length === 0) return;
    const top = this.texts.length - 1;
    const current = this.texts[top]!;
    // Whitespace between child elements is layout, not content; skipping it keeps container
    // elements (the root above 100k hosts) from accumulating it.
    if (current === '' && isBlank(text)) return;
    if (current.length + text.length > this.limits.maxTextBytes) {
      throw this.at(
        `The text of <${this.path[this.path.length - 1]}> is larger than the ${formatSize(this.limits.maxTextBytes)} limit`,
      );
    }
    this.texts[top] = current === '' ? text : current + text;
  }
}

/** True when `text` is XML whitespace only; cheaper than `trim()`, which allocates. */
function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}
