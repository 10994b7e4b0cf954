import { readFileSync } from 'node:fs';

/**
 * The node options of a Procfile process (`web: node --flag dist/src/main.js web` gives
 * `--flag`), so a bench's server runs as deployed.
 */
export function procfileNodeArgs(role: string): string[] {
  const line = readFileSync('Procfile', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${role}:`));
  const words = (line ?? '')
    .slice(role.length + 1)
    .trim()
    .split(/\s+/);
  const entry = words.findIndex((w) => w.endsWith('.js'));
  return words[0] === 'node' && entry > 0 ? words.slice(1, entry) : [];
}
