/**
 * A tagged template for parameterised SQL, so no statement numbers its `$n` by hand.
 *
 * Glossary:
 * - **statement**: what `pg` runs, `{ text, values }` with `$1…$n` in `text`.
 * - **fragment**: a piece of SQL with its own values, built by {@link sql}; it is also a
 *   statement, so a module hands another one `{ text, values }` and never a spliced string.
 *
 * Invariants: an interpolated value always becomes a parameter (`$n`), never text; an
 * interpolated {@link SqlFragment} is spliced as SQL with its values renumbered after the ones
 * before it; the only way to put a name into the text is {@link sql.identifier} against an
 * allow-list the caller fixes in code.
 *
 * @example
 * const visible = sql`f.workspace_id = ${workspaceId} AND f.hidden = false`;
 * await db.query(sql`SELECT * FROM findings f WHERE f.scan_id = ${scanId} AND ${visible}`);
 * // text: SELECT * FROM findings f WHERE f.scan_id = $1 AND f.workspace_id = $2 AND f.hidden = false
 */
export class SqlFragment {
  /** The SQL with `$1…$n` placeholders, as `pg` expects it. */
  readonly text: string;
  /** The parameters, `values[i]` for `$(i + 1)`. */
  readonly values: unknown[];
  /** Literal pieces around the parameters: `parts.length === values.length + 1`. */
  readonly #parts: readonly string[];

  /** @internal Use {@link sql}; `parts` must be one longer than `values`. */
  constructor(parts: readonly string[], values: readonly unknown[]) {
    const outParts: string[] = [parts[0]!];
    const outValues: unknown[] = [];
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (value instanceof SqlFragment) {
        const inner = value.#parts;
        outParts[outParts.length - 1] += inner[0]!;
        for (let j = 0; j < value.values.length; j++) {
          outValues.push(value.values[j]);
          outParts.push(inner[j + 1]!);
        }
        outParts[outParts.length - 1] += parts[i + 1]!;
      } else {
        assertNotStatement(value);
        outValues.push(value);
        outParts.push(parts[i + 1]!);
      }
    }
    this.#parts = outParts;
    this.values = outValues;
    let text = outParts[0]!;
    for (let i = 1; i < outParts.length; i++) text += `$${i}${outParts[i]}`;
    this.text = text;
  }
}

/**
 * A plain `{ text, values }` interpolated as a value would reach PostgreSQL as JSON text: a
 * statement made elsewhere must be a {@link SqlFragment} to be spliced, so refuse it loudly.
 */
function assertNotStatement(value: unknown): void {
  if (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.getPrototypeOf(value) === Object.prototype &&
    'text' in value &&
    'values' in value
  ) {
    throw new TypeError('sql: a { text, values } object must be built with sql`…` to be embedded');
  }
}

/** Builds a {@link SqlFragment}: `${value}` becomes a parameter, `${fragment}` is spliced. */
export function sql(strings: TemplateStringsArray, ...values: unknown[]): SqlFragment {
  return new SqlFragment(strings, values);
}

/** An empty fragment, for optional clauses: `${filter ? sql`AND …` : sql.empty}`. */
sql.empty = new SqlFragment([''], []);

/**
 * Joins fragments (or values, each becoming a parameter) with `separator` (default `, `).
 * An empty list gives an empty fragment.
 */
sql.join = function join(items: readonly unknown[], separator: SqlFragment = sql`, `): SqlFragment {
  if (items.length === 0) return sql.empty;
  const parts = [''];
  const values: unknown[] = [];
  items.forEach((item, i) => {
    if (i > 0) {
      values.push(separator);
      parts.push('');
    }
    values.push(item);
    parts.push('');
  });
  return new SqlFragment(parts, values);
};

/**
 * A quoted identifier, only if `name` is one of `allowed` (a list fixed in code: a sort column,
 * a table): names never come from a request unchecked.
 * @throws TypeError when `name` is not in `allowed`.
 */
sql.identifier = function identifier<T extends string>(name: T, allowed: readonly T[]): SqlFragment {
  if (!allowed.includes(name)) throw new TypeError(`sql: identifier ${JSON.stringify(name)} is not allowed`);
  return new SqlFragment([`"${name.replaceAll('"', '""')}"`], []);
};
