import sax from 'sax';
import { SaxesParser } from 'saxes';

/**
 * The SAX tokenizers we can run on. saxes is the default (see bench/parsers/README.md for the
 * measurement); sax stays selectable so the bench can compare them on the same extraction code.
 * Neither fetches a DTD; entity declarations are rejected one level up in `xml-walker.ts`.
 */
export type XmlEngineName = 'saxes' | 'sax';

/**
 * A well-formedness error reported by the tokenizer itself, as opposed to an exception thrown by
 * our own event handlers (a ParseError, or a bug that must not be reported as a broken file).
 */
export class XmlSyntaxError extends Error {
  override readonly name = 'XmlSyntaxError';
}

/** Events the walker needs from a tokenizer. Names arrive qualified (`v:vulnerability`). */
export interface XmlEvents {
  open(name: string, attrs: Record<string, string>): void;
  close(name: string): void;
  text(text: string): void;
  doctype(text: string): void;
}

/** A push tokenizer; `write` and `close` throw on malformed input. */
export interface XmlEngine {
  write(text: string): void;
  close(): void;
  /** 1-based line of the next character. */
  line(): number;
  /** 1-based column of the next character. */
  column(): number;
  /** 0-based offset of the next character in the text written so far, in UTF-16 code units. */
  position(): number;
}

function createSaxes(events: XmlEvents): XmlEngine {
  const p = new SaxesParser({ position: true });
  p.on('opentag', (tag) => events.open(tag.name, tag.attributes as Record<string, string>));
  p.on('closetag', (tag) => events.close(tag.name));
  p.on('text', (t) => events.text(t));
  p.on('cdata', (t) => events.text(t));
  p.on('doctype', (t) => events.doctype(t));
  p.on('error', (err) => {
    throw new XmlSyntaxError(err.message);
  });
  return {
    write: (text) => void p.write(text),
    close: () => void p.close(),
    line: () => p.line,
    column: () => p.column + 1,
    position: () => p.position,
  };
}

function createSax(events: XmlEvents): XmlEngine {
  const p = sax.parser(true, { trim: false, normalize: false, position: true, xmlns: false });
  p.onopentag = (tag) => events.open(tag.name, tag.attributes as Record<string, string>);
  p.onclosetag = (name) => events.close(name);
  p.ontext = (t) => events.text(t);
  p.oncdata = (t) => events.text(t);
  p.ondoctype = (t) => events.doctype(t);
  p.onerror = (err) => {
    throw new XmlSyntaxError(err.message);
  };
  return {
    write: (text) => void p.write(text),
    close: () => void p.close(),
    line: () => p.line + 1,
    column: () => p.column + 1,
    position: () => p.position,
  };
}

/** Creates a tokenizer bound to `events`. */
export function createXmlEngine(name: XmlEngineName, events: XmlEvents): XmlEngine {
  return name === 'sax' ? createSax(events) : createSaxes(events);
}
