import { createHash } from 'node:crypto';
import { SaxesParser } from 'saxes';

/**
 * saxes with one allocation less per element: an element without attributes gets one shared,
 * frozen, empty attributes object instead of a fresh `Object.create(null)`, and the attribute
 * list is reused rather than replaced after every tag. Most elements of a scan report have no
 * attributes; the saving is a few per cent of a parse's CPU (bench/parsers/README.md). An element
 * with attributes gets what saxes gives it: a fresh null-prototype object, duplicates refused.
 *
 * It replaces two of saxes' internal methods, so it is used only when those are byte for byte the
 * ones it was written against (saxes 6.0.0, without namespaces); any other saxes runs unchanged.
 */

/** The attributes of every element that has none. Frozen: a handler cannot leak into the next. */
export const NO_ATTRIBUTES: Readonly<Record<string, string>> = Object.freeze(
  Object.create(null) as Record<string, string>,
);

// saxes 6.0.0's internal constants the replaced methods use.
const EOC = -1;
const S_OPEN_TAG_SLASH = 35;
const S_ATTRIB = 36;
const FORWARD_SLASH = 0x2f;
const GREATER = 0x3e;
const isS = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** SHA-256 of `sOpenTag` and `processAttribsPlain` in saxes 6.0.0, as `Function#toString` prints them. */
const SAXES_6_0_0 = {
  sOpenTag: '321fba296f1e1bfe00c00051982ecef8deadb194b02cb8c2e93f0b5ad49b07d0',
  processAttribsPlain: '0fd54c9c410e4f325abbf336c9819ba9201ad2e9d5773bf017c7fe3eeac8f7b9',
};

interface Internals {
  name: string;
  tag: { name: string; attributes: Record<string, string> } | null;
  attribList: { name: string; value: string }[];
  state: number;
  sawRoot: boolean;
  closedRoot: boolean;
  fragmentOpt: boolean;
  openTagStartHandler?: (tag: unknown) => void;
  captureNameChars(): number;
  openTag(): void;
  fail(message: string): void;
}

function sOpenTag(this: Internals): void {
  const c = this.captureNameChars();
  if (c === EOC) return;
  const tag = (this.tag = { name: this.name, attributes: NO_ATTRIBUTES as Record<string, string> });
  this.name = '';
  this.openTagStartHandler?.call(this, tag);
  this.sawRoot = true;
  if (!this.fragmentOpt && this.closedRoot) this.fail('documents may contain only one root.');
  switch (c) {
    case GREATER:
      this.openTag();
      break;
    case FORWARD_SLASH:
      this.state = S_OPEN_TAG_SLASH;
      break;
    default:
      if (!isS(c)) this.fail('disallowed character in tag name.');
      this.state = S_ATTRIB;
  }
}

function processAttribsPlain(this: Internals): void {
  const list = this.attribList;
  if (list.length === 0) return;
  const attributes = Object.create(null) as Record<string, string>;
  for (const { name, value } of list) {
    if (attributes[name] !== undefined) this.fail(`duplicate attribute: ${name}.`);
    attributes[name] = value;
  }
  this.tag!.attributes = attributes;
  list.length = 0;
}

const sourceHash = (f: unknown): string =>
  typeof f === 'function' ? createHash('sha256').update(f.toString()).digest('hex') : '';

const original = SaxesParser.prototype as unknown as Record<string, unknown>;

/** True when the installed saxes is the one the replacement methods were written against. */
export const leanSaxesApplies =
  sourceHash(original.sOpenTag) === SAXES_6_0_0.sOpenTag &&
  sourceHash(original.processAttribsPlain) === SAXES_6_0_0.processAttribsPlain;

/** saxes with the lean open tag when {@link leanSaxesApplies}, else saxes itself. */
export class LeanSaxesParser extends SaxesParser {}

if (leanSaxesApplies) {
  const proto = LeanSaxesParser.prototype as unknown as Record<string, unknown>;
  proto.sOpenTag = sOpenTag;
  proto.processAttribsPlain = processAttribsPlain;
}
