import { describe, expect, it } from 'vitest';
import { sql } from '../../../src/db/sql.js';

describe('sql', () => {
  it('numbers each interpolated value as a parameter, in order', () => {
    const id = 'a1';
    const q = sql`select * from scans where id = ${id} and status = ${'parsing'}`;
    expect({ text: q.text, values: q.values }).toEqual({
      text: 'select * from scans where id = $1 and status = $2',
      values: ['a1', 'parsing'],
    });
  });

  it('keeps values out of the text, whatever they contain', () => {
    const hostile = "x'; drop table scans; --";
    const q = sql`select ${hostile}::text`;
    expect(q.text).toBe('select $1::text');
    expect(q.values).toEqual([hostile]);
  });

  it('splices an embedded fragment and renumbers its values after the ones before it', () => {
    const visible = sql`f.workspace_id = ${'w1'} and f.hidden = ${false}`;
    const q = sql`select 1 from findings f where f.scan_id = ${'s1'} and ${visible} limit ${10}`;
    expect(q.text).toBe(
      'select 1 from findings f where f.scan_id = $1 and f.workspace_id = $2 and f.hidden = $3 limit $4',
    );
    expect(q.values).toEqual(['s1', 'w1', false, 10]);
  });

  it('splices fragments nested several levels deep, and the same fragment twice', () => {
    const inner = sql`x = ${1}`;
    const middle = sql`(${inner} or y = ${2})`;
    const q = sql`where ${middle} and ${inner} and z = ${3}`;
    expect(q.text).toBe('where (x = $1 or y = $2) and x = $3 and z = $4');
    expect(q.values).toEqual([1, 2, 1, 3]);
  });

  it('splices a fragment with no values, and a fragment at the very start and end', () => {
    const none = sql`now()`;
    const q = sql`${sql`select ${1}`}, ${none}${sql` from t where a = ${'a'}`}`;
    expect(q.text).toBe('select $1, now() from t where a = $2');
    expect(q.values).toEqual([1, 'a']);
  });

  it('passes arrays, null and objects through as single parameters', () => {
    const q = sql`select * from unnest(${['a', 'b']}::text[]) where ${null} is null and ${{ k: 1 }}::jsonb is not null`;
    expect(q.text).toBe('select * from unnest($1::text[]) where $2 is null and $3::jsonb is not null');
    expect(q.values).toEqual([['a', 'b'], null, { k: 1 }]);
  });

  it('refuses a plain { text, values } object, which would reach the database as JSON text', () => {
    const statement = { text: 'select $1', values: [1] };
    expect(() => sql`select * from (${statement}) s`).toThrow(
      'sql: a { text, values } object must be built with sql`…` to be embedded',
    );
  });

  it('is itself a { text, values } statement that pg accepts as a query config', () => {
    const q = sql`select ${1}`;
    expect(Object.keys(q).sort()).toEqual(['text', 'values']);
  });

  describe('sql.join', () => {
    it('joins values as parameters with a comma by default', () => {
      const q = sql`insert into t values (${sql.join([1, 'b', null])})`;
      expect(q.text).toBe('insert into t values ($1, $2, $3)');
      expect(q.values).toEqual([1, 'b', null]);
    });

    it('joins fragments with a given separator and renumbers across them', () => {
      const conditions = [sql`a = ${1}`, sql`b = ${2}`, sql`c is null`];
      const q = sql`where ${sql.join(conditions, sql` and `)} limit ${5}`;
      expect(q.text).toBe('where a = $1 and b = $2 and c is null limit $3');
      expect(q.values).toEqual([1, 2, 5]);
    });

    it('joins an empty list to nothing', () => {
      const q = sql`select 1${sql.join([])}`;
      expect(q.text).toBe('select 1');
      expect(q.values).toEqual([]);
    });

    it('accepts a separator that carries a value', () => {
      const q = sql`${sql.join([sql`a`, sql`b`], sql` + ${7} + `)}`;
      expect(q.text).toBe('a + $1 + b');
      expect(q.values).toEqual([7]);
    });
  });

  describe('sql.identifier', () => {
    const SORTABLE = ['created_at', 'severity'] as const;

    it('quotes a name from the allow-list', () => {
      const q = sql`order by ${sql.identifier('severity', SORTABLE)} desc`;
      expect(q.text).toBe('order by "severity" desc');
      expect(q.values).toEqual([]);
    });

    it('refuses a name outside the allow-list', () => {
      expect(() => sql.identifier('id; drop table t' as 'severity', SORTABLE)).toThrow(
        'sql: identifier "id; drop table t" is not allowed',
      );
    });
  });

  it('sql.empty adds nothing', () => {
    const q = sql`select ${1}${sql.empty}`;
    expect(q.text).toBe('select $1');
    expect(q.values).toEqual([1]);
  });
});
