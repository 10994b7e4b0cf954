import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, relativeLinksOf, slug } from './markdown.js';

const root = path.resolve(import.meta.dirname, '../../..');

/** The README, the CHANGELOG and every page of docs/. */
function markdownFiles(): string[] {
  const docs = readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join(root, 'docs', f));
  return [path.join(root, 'README.md'), path.join(root, 'CHANGELOG.md'), ...docs];
}

/** Why a relative link does not resolve, or null when it does. */
function brokenLink(from: string, target: string): string | null {
  const [rawPath, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = rawPath === '' ? from : path.resolve(path.dirname(from), decodeURIComponent(rawPath));
  if (!existsSync(file)) return `no file ${path.relative(root, file)}`;
  if (anchor === undefined || anchor === '') return null;
  if (statSync(file).isDirectory() || !file.endsWith('.md'))
    return `an anchor into a file that is not Markdown`;
  return anchorsOf(file).has(anchor) ? null : `no heading #${anchor} in ${path.relative(root, file)}`;
}

describe('documentation links', () => {
  it('gives headings the anchors GitHub gives them', () => {
    expect(slug('Errors')).toBe('errors');
    expect(slug('One machine: `npm start`')).toBe('one-machine-npm-start');
    expect(slug('Settings > Workflows')).toBe('settings--workflows');
    expect(slug('[0.1.0] - 2026-11-27')).toBe('010---2026-11-27');
  });

  it('resolves every relative link of the README, the CHANGELOG and docs/ to a file and heading', () => {
    const broken: string[] = [];
    for (const file of markdownFiles()) {
      for (const link of relativeLinksOf(file)) {
        const why = brokenLink(file, link.target);
        if (why) broken.push(`${path.relative(root, file)}:${link.line} (${link.target}): ${why}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('finds a link to a missing heading', () => {
    const readme = path.join(root, 'README.md');
    expect(brokenLink(readme, 'docs/api.md#errors')).toBeNull();
    expect(brokenLink(readme, 'docs/api.md#' + 'no-such-heading')).toMatch(/no heading #no-such-heading/);
    expect(brokenLink(readme, 'docs/' + 'no-such-page.md')).toMatch(/no file docs\/no-such-page\.md/);
  });
});
