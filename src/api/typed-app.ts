import type { FastifyInstance } from 'fastify';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';

/**
 * `app` seen through the JSON-schema type provider: the same instance, with each route's
 * `req.body`, `req.query` and `req.params` typed from its `schema` (which must be `as const`),
 * so handlers read them as the schema declares and never cast. Types only: requests are still
 * validated by the app's own Ajv instances (`validators()` in `app.ts`: bodies strict and never
 * coerced, unknown fields refused). `if`/`then` are read too, so a workflow's target is typed by
 * its `kind` as the schema picks it.
 */
export function typed(app: FastifyInstance) {
  return app.withTypeProvider<
    JsonSchemaToTsProvider<{ ValidatorSchemaOptions: { parseIfThenElseKeywords: true } }>
  >();
}

/** An app whose routes' request types come from their schemas ({@link typed}). */
export type TypedApp = ReturnType<typeof typed>;
