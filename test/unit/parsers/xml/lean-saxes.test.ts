import { SaxesParser } from 'saxes';
import { describe, expect, it } from 'vitest';
import { LeanSaxesParser, NO_ATTRIBUTES, leanSaxesApplies } from '../../../../src/parsers/xml/lean-saxes.js';

/** Every event and error of a parser fed `text` in pieces of `size` characters. */
function events(Parser: typeof SaxesParser, text: string, size: number): unknown[] {
  const out: unknown[] = [];
  const p = new Parser({ position: true });
  p.on('opentag', (t) => out.push(['open', t.name, { ...t.attributes }, t.isSelfClosing, p.position]));
  p.on('closetag', (t) => out.push(['close', t.name, p.position]));
  p.on('text', (t) => out.push(['text', t]));
  p.on('cdata', (t) => out.push(['cdata', t]));
  p.on('error', (e) => out.push(['error', e.message]));
  for (let i = 0; i < text.length; i += size) p.write(text.slice(i, i + size));
  p.close();
  return out;
}

const DOC = `<?xml version="1.0"?>
<Report a="1"><Host><Item port="443" svc_name="www" severity="2"/><Item/><empty/>
<x:y xmlns:x="urn:x" x:k='v &amp; "q"'>t<![CDATA[<c>]]></x:y><b></b ></Host></Report>`;

describe('LeanSaxesParser', () => {
  it('is in use with the installed saxes', () => {
    expect(leanSaxesApplies).toBe(true);
  });

  it.each([1, 2, 3, 7, DOC.length])('emits what saxes emits, in pieces of %i characters', (size) => {
    expect(events(LeanSaxesParser, DOC, size)).toEqual(events(SaxesParser, DOC, size));
  });

  it.each([
    ['a duplicate attribute', '<r a="1" a="2"/>'],
    ['two roots', '<r/><s/>'],
    ['a disallowed character in a tag name', '<r><a\u0001/></r>'],
    ['a duplicate attribute after elements without any', '<r><a/><b c="1" c="1"></b></r>'],
  ])('fails as saxes does on %s', (_name, text) => {
    const lean = events(LeanSaxesParser, text, 1 << 20);
    expect(lean).toEqual(events(SaxesParser, text, 1 << 20));
    expect(lean.some((e) => (e as unknown[])[0] === 'error')).toBe(true);
  });

  it('gives an element without attributes the frozen shared object, and one with them its own', () => {
    const seen: Record<string, string>[] = [];
    const p = new LeanSaxesParser();
    p.on('opentag', (t) => seen.push(t.attributes as Record<string, string>));
    p.write('<r><a k="1"/><b/><c k="2"/><d></d></r>').close();
    expect(seen[0]).toBe(NO_ATTRIBUTES);
    expect(seen[2]).toBe(NO_ATTRIBUTES);
    expect(seen[4]).toBe(NO_ATTRIBUTES);
    expect(Object.isFrozen(NO_ATTRIBUTES)).toBe(true);
    expect(Object.keys(NO_ATTRIBUTES)).toEqual([]);
    expect(seen[1]).toEqual({ k: '1' });
    expect(seen[3]).toEqual({ k: '2' });
    expect(seen[1]).not.toBe(seen[3]);
    expect(Object.getPrototypeOf(seen[1])).toBeNull();
  });
});
