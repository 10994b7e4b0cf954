import { CyclonedxJsonHandler } from './json.js';
import { CyclonedxXmlHandler } from './xml.js';
import type { FormatParser } from '../format-parser.js';
import { prependChunk } from '../input-stream.js';
import { walkJson } from '../json/walk-json.js';
import { walkXml } from '../xml/walk-xml.js';

/** CycloneDX 1.2–1.6 in JSON or XML; the first non-blank character decides which. */
export const parseCyclonedx: FormatParser = async function* (chunks, ctx) {
  const it = chunks[Symbol.asyncIterator]();
  let first = await it.next();
  while (!first.done && first.value.length === 0) first = await it.next();
  if (first.done) {
    yield* walkJson(prependChunk(null, it), new CyclonedxJsonHandler(ctx), ctx);
    return;
  }
  const lead = first.value
    .toString('utf8', 0, Math.min(first.value.length, 1024))
    .replace(/^\uFEFF/, '')
    .trimStart()[0];
  const input = prependChunk(first.value, it);
  if (lead === '<') yield* walkXml(input, new CyclonedxXmlHandler(ctx), ctx);
  else yield* walkJson(input, new CyclonedxJsonHandler(ctx), ctx);
};
