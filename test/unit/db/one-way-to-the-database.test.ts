import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * One way to the database (docs/architecture.md#the-database): statements are written with the
 * `sql` template of src/db/sql.ts, which numbers the parameters itself, and no module outside
 * src/db and the migrate command holds MikroORM's EntityManager.
 */

const SRC = path.resolve('src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

const files = sourceFiles(SRC).map((file) => ({
  file: path.relative(path.resolve('.'), file).split(path.sep).join('/'),
  text: readFileSync(file, 'utf8'),
}));

/**
 * Modules still numbering `$n` by hand, to be converted: a file leaves this list when it is, and
 * the test fails if a listed file no longer needs to be here.
 */
const NOT_YET_CONVERTED = new Set<string>([]);

/** `$1`-style placeholders inside a string or template literal that reaches a query. */
function numberedPlaceholders(text: string): string[] {
  const hits: string[] = [];
  const literal = /(`(?:\\.|[^`\\])*`|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")/g;
  for (const m of text.matchAll(literal)) {
    const body = m[0];
    // `$1` written out in a statement, or `$${params.length}` built from a counter (a dollar
    // amount such as `$${usd}` is neither).
    const written =
      /\$\d/.test(body) && /\b(SELECT|INSERT|UPDATE|DELETE|WHERE|VALUES|LIMIT|ANY)\b/i.test(body);
    const counted = /\$\$\{[^}]*(params|args|length|base\b)/.test(body);
    if (written || counted) {
      hits.push(body.slice(0, 80).replace(/\s+/g, ' '));
    }
  }
  return hits;
}

describe('one way to the database', () => {
  it('finds no statement numbering its parameters by hand outside the modules not yet converted', () => {
    const offenders = files
      .filter((f) => !f.file.startsWith('src/db/') && !NOT_YET_CONVERTED.has(f.file))
      .flatMap((f) => numberedPlaceholders(f.text).map((hit) => `${f.file}: ${hit}`));
    expect(offenders).toEqual([]);
  });

  it('lists only modules that still number parameters by hand', () => {
    const stale = [...NOT_YET_CONVERTED].filter((file) => {
      const f = files.find((x) => x.file === file);
      return !f || numberedPlaceholders(f.text).length === 0;
    });
    expect(stale).toEqual([]);
  });

  it('finds no EntityManager outside src/db and the migrate command', () => {
    const offenders = files
      .filter((f) => !f.file.startsWith('src/db/') && f.file !== 'src/cli/migrate.ts')
      .filter((f) =>
        /\bEntityManager\b|\.em\.|\.em\b\s*[,;)]|\bem\.(fork|find|flush|create|transactional)/.test(f.text),
      )
      .map((f) => f.file);
    expect(offenders).toEqual([]);
  });

  it('catches a numbered statement and an entity manager (the checks can fail)', () => {
    expect(numberedPlaceholders("db.query('SELECT * FROM scans WHERE id = $1', [id])")).toHaveLength(1);
    expect(numberedPlaceholders('db.query(`DELETE FROM x WHERE id = $${params.length}`)')).toHaveLength(1);
    expect(numberedPlaceholders("replace(REVEAL_IN_URL, '$1[redacted]')")).toEqual([]);
    expect(numberedPlaceholders('sql`SELECT * FROM scans WHERE id = ${id}`')).toEqual([]);
  });
});
