import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf } from './markdown.js';

const root = path.resolve(import.meta.dirname, '../../..');

/**
 * Citations a reader of the repository can follow. Comments, tests and docs cite the project's
 * own pages (`docs/api.md#errors`), never a tracker number or a file outside the repository: a
 * clone has neither. The patterns are assembled so that this file does not match them itself.
 */
const OUTSIDE = new RegExp(
  [
    ['DECI', 'SIONS'].join(''),
    ['[Ii]ss', 'ue [0-9]'].join(''),
    ['\\.\\./', 'shared'].join(''),
    ['service', '-spec'].join(''),
  ].join('|'),
);
const DOCS_CITATION = /\bdocs\/([a-z0-9-]+\.md)(?:#([a-z0-9_-]+))?/g;

const FOLDERS = ['src', 'docs', 'test', 'bench', 'config', '.ci', 'packages'];
const FILES = ['README.md', 'CHANGELOG.md'];
const TEXT = /\.(ts|js|cjs|mjs|md|json|sh|ya?ml|txt)$|^run$/;

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'fixtures' || name === 'dist') continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) yield* walk(full);
    else if (TEXT.test(name)) yield full;
  }
}

function sources(): string[] {
  return [...FOLDERS.flatMap((f) => [...walk(path.join(root, f))]), ...FILES.map((f) => path.join(root, f))];
}

describe('citations', () => {
  it('cite nothing a clone of the repository does not have', () => {
    const found: string[] = [];
    for (const file of sources()) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (OUTSIDE.test(line)) found.push(`${path.relative(root, file)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('name docs pages and headings that exist', () => {
    const anchors = new Map<string, Set<string> | null>();
    const anchorsOfPage = (page: string): Set<string> | null => {
      if (!anchors.has(page)) {
        const file = path.join(root, 'docs', page);
        anchors.set(page, statSync(file, { throwIfNoEntry: false }) ? anchorsOf(file) : null);
      }
      return anchors.get(page)!;
    };
    const broken: string[] = [];
    for (const file of sources()) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          for (const [cited, page, anchor] of line.matchAll(DOCS_CITATION)) {
            const known = anchorsOfPage(page!);
            if (known === null || (anchor !== undefined && !known.has(anchor)))
              broken.push(`${path.relative(root, file)}:${i + 1}: ${cited}`);
          }
        });
    }
    expect(broken).toEqual([]);
  });
});
