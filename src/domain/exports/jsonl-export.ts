import { Readable } from 'node:stream';
import type { Case } from '../cases/case.js';

/**
 * JSON Lines: one case per line, as `view` shapes it (the API's case view without evidence,
 * so a line equals `GET /api/v1/cases/:id` less its evidence).
 */
export function renderJsonl(cases: AsyncIterable<Case>, view: (c: Case) => unknown = (c) => c): Readable {
  return Readable.from(lines(cases, view), { objectMode: false });
}

async function* lines(cases: AsyncIterable<Case>, view: (c: Case) => unknown): AsyncGenerator<string> {
  // Lines are gathered into ~64 KiB chunks: one write per case costs more than the JSON.
  let buf = '';
  for await (const c of cases) {
    buf += JSON.stringify(view(c)) + '\n';
    if (buf.length >= 65_536) {
      yield buf;
      buf = '';
    }
  }
  if (buf) yield buf;
}
