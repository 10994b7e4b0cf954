import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

/** The parts of an OpenAPI 3.1 document these checks read. */
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, unknown> };
}
export interface Operation {
  security?: Record<string, string[]>[];
  responses: Record<string, { description: string; content?: Record<string, { schema?: unknown }> }>;
}

/** `/api/v1/cases/:id` → `/api/v1/cases/{id}` (Fastify's path to OpenAPI's). */
export function openapiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** A response as `app.inject` returns it. */
interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/**
 * Checks real answers against the document: the status is documented for the operation, the
 * media type is one it lists, and the body validates against that media type's schema (JSON
 * Schema 2020-12, formats checked). `$ref`s into `#/components/schemas` resolve.
 */
export function responseChecker(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const rewrite = (schema: unknown): unknown =>
    JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"components#/$defs/'));
  ajv.addSchema({ $id: 'components', $defs: rewrite(doc.components.schemas ?? {}) as object });
  const compiled = new Map<string, ValidateFunction>();
  const checked = new Set<string>();

  function check(method: string, url: string, res: Answer): void {
    const path = openapiPath(url);
    const op = doc.paths[path]?.[method.toLowerCase()];
    expect(op, `${method} ${path} is not in the document`).toBeDefined();
    const status = String(res.statusCode);
    const documented = op!.responses[status] ?? op!.responses[`${status[0]}XX`];
    expect(
      documented,
      `${method} ${path} answered ${status}, which is not documented: ${res.body}`,
    ).toBeDefined();
    checked.add(`${method.toUpperCase()} ${path} ${status}`);
    if (res.statusCode === 204 || !documented!.content) {
      expect(res.body, `${method} ${path} ${status} has a body`).toBe('');
      return;
    }
    const mediaType = String(res.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    const content = documented!.content[mediaType];
    expect(
      content,
      `${method} ${path} ${status} answered ${mediaType}; documented: ${Object.keys(documented!.content).join(', ')}`,
    ).toBeDefined();
    if (!/^application\/(.+\+)?json$/.test(mediaType) || content!.schema === undefined) return;
    const key = `${method} ${path} ${status} ${mediaType}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile(rewrite(content!.schema) as object);
      compiled.set(key, validate);
    }
    const body: unknown = JSON.parse(res.body);
    validate(body);
    expect(validate.errors ?? [], `${key}: ${res.body.slice(0, 2000)}`).toEqual([]);
  }

  return { check, checked };
}
