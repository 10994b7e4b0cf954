/**
 * A deliberately small structural checker mirroring the subset of JSON Schema the triage schemas
 * use. It exists so validation does not depend on how the HTTP layer configured ajv (see the
 * Fastify caveat in request-schema.ts) and so every failing field is reported (DECISIONS §2).
 */

/** One failing field, `path` a JSON Pointer (`/asset/type`). */
export interface FieldError {
  path: string;
  message: string;
}

/** Rule of one field: the subset of JSON Schema the triage schemas use. */
export type FieldRule =
  | { kind: 'string'; maxLength: number; pattern?: RegExp; patternHint?: string }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'boolean' }
  | { kind: 'number'; minimum: number; maximum: number }
  | { kind: 'array'; minItems?: number; maxItems: number; unique?: boolean; item: FieldRule }
  | { kind: 'object'; rule: ObjectRule };

/** Rule of an object: its allowed fields and the required ones. */
export interface ObjectRule {
  fields: Record<string, FieldRule>;
  required: readonly string[];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks `value` against an object rule; unknown properties are errors (DECISIONS §6). */
export function checkObject(value: unknown, rule: ObjectRule, path: string): FieldError[] {
  if (!isPlainObject(value)) return [{ path: path || '/', message: 'must be an object' }];
  const errors: FieldError[] = [];
  for (const name of rule.required) {
    if (value[name] === undefined) errors.push({ path: `${path}/${name}`, message: 'is required' });
  }
  for (const [name, fieldValue] of Object.entries(value)) {
    const fieldRule = rule.fields[name];
    if (fieldRule === undefined) {
      errors.push({ path: `${path}/${name}`, message: 'is not an allowed property' });
      continue;
    }
    if (fieldValue === undefined) continue;
    errors.push(...checkField(fieldValue, fieldRule, `${path}/${name}`));
  }
  return errors;
}

function checkField(value: unknown, rule: FieldRule, path: string): FieldError[] {
  switch (rule.kind) {
    case 'string':
      if (typeof value !== 'string') return [{ path, message: 'must be a string' }];
      if (value.length === 0) return [{ path, message: 'must not be empty' }];
      if (value.length > rule.maxLength) {
        return [{ path, message: `must be at most ${rule.maxLength} characters` }];
      }
      if (rule.pattern !== undefined && !rule.pattern.test(value)) {
        return [{ path, message: rule.patternHint ?? `must match ${rule.pattern.source}` }];
      }
      return [];
    case 'enum':
      return typeof value === 'string' && rule.values.includes(value)
        ? []
        : [{ path, message: `must be one of ${rule.values.join(', ')}` }];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [{ path, message: 'must be a boolean' }];
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        return [{ path, message: 'must be a number' }];
      }
      return value < rule.minimum || value > rule.maximum
        ? [{ path, message: `must be between ${rule.minimum} and ${rule.maximum}` }]
        : [];
    case 'array':
      return checkArray(value, rule, path);
    case 'object':
      return checkObject(value, rule.rule, path);
  }
}

function checkArray(value: unknown, rule: Extract<FieldRule, { kind: 'array' }>, path: string): FieldError[] {
  if (!Array.isArray(value)) return [{ path, message: 'must be an array' }];
  if (rule.minItems !== undefined && value.length < rule.minItems) {
    return [{ path, message: `must have at least ${rule.minItems} items` }];
  }
  if (value.length > rule.maxItems) return [{ path, message: `must have at most ${rule.maxItems} items` }];
  const errors: FieldError[] = [];
  value.forEach((item, index) => errors.push(...checkField(item, rule.item, `${path}/${index}`)));
  if (rule.unique === true && new Set(value.map((v) => JSON.stringify(v))).size !== value.length) {
    errors.push({ path, message: 'must not contain duplicate items' });
  }
  return errors;
}
