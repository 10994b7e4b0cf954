import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { fieldErrors } from '../../../src/api/plugins/problem.js';
import { listCasesQuery } from '../../../src/api/schemas/scans.js';
import { statementQuery } from '../../../src/api/schemas/console.js';
import { describedPattern } from '../../../src/lib/schema-patterns.js';

/** Field errors for `value` under `schema`, as the problem plugin words them. */
function refusals(schema: object, value: unknown, part = 'querystring') {
  const validate = new Ajv({ allErrors: true, coerceTypes: true, strict: false }).compile(schema);
  expect(validate(value)).toBe(false);
  return fieldErrors(validate.errors as Parameters<typeof fieldErrors>[0], part);
}

describe('pattern refusals', () => {
  it('say what the value must be, without quoting the regular expression', () => {
    const errors = refusals(listCasesQuery, { severity: 'HIGH,URGENT', cve: 'log4shell' });
    expect(errors).toEqual([
      {
        path: '/querystring/severity',
        message: 'must be one or more of CRITICAL, HIGH, MEDIUM, LOW, INFO, separated by commas',
      },
      { path: '/querystring/cve', message: 'must be a CVE id such as CVE-2021-44228' },
    ]);
    expect(refusals(statementQuery, { month: '2026-13' })).toEqual([
      { path: '/querystring/month', message: 'must be a month as YYYY-MM' },
    ]);
  });

  it('fall back to a generic message for a pattern declared without one', () => {
    const schema = { type: 'object', properties: { code: { type: 'string', pattern: '^[a-z]{3}$' } } };
    const errors = refusals(schema, { code: 'ABCD' }, 'body');
    expect(errors).toEqual([{ path: '/code', message: 'is not in the expected format' }]);
    expect(JSON.stringify(errors)).not.toContain('[a-z]');
  });

  it('register the message with the pattern, which is returned unchanged', () => {
    expect(describedPattern('^x+$', 'must be some x')).toBe('^x+$');
    const errors = refusals(
      { type: 'object', properties: { v: { type: 'string', pattern: '^x+$' } } },
      { v: 'y' },
    );
    expect(errors).toEqual([{ path: '/querystring/v', message: 'must be some x' }]);
  });
});
