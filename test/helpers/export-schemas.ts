import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import AjvDraft04Module from 'ajv-draft-04';
import addFormatsModule from 'ajv-formats';

/**
 * Validators for the official export schemas: SARIF 2.1.0 (OASIS, draft-04, vendored in
 * test/fixtures/schemas) and CycloneDX 1.6 (draft-07, shipped in @cyclonedx/cyclonedx-library).
 */
// Both are CommonJS with a `default` export: the interop shapes differ between tsc and Node.
const AjvDraft04 = ((AjvDraft04Module as unknown as { default?: unknown }).default ??
  AjvDraft04Module) as typeof Ajv;
const addFormats = addFormatsModule as unknown as (ajv: unknown) => void;
const require = createRequire(import.meta.url);

function loadJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

export function sarifValidator(): ValidateFunction {
  const ajv = new AjvDraft04({ allErrors: true, strict: false });
  addFormats(ajv);
  return ajv.compile(loadJson(path.resolve('test/fixtures/schemas/sarif-schema-2.1.0.json')));
}

export function cycloneDx16Validator(): ValidateFunction {
  const dir = path.join(
    path.dirname(require.resolve('@cyclonedx/cyclonedx-library/package.json')),
    'res/schema',
  );
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  // JSON Schema's IRI formats (RFC 3987) and internationalised e-mail: Ajv has no checker for
  // them; these accept what the RFCs allow in practice and refuse whitespace and delimiters.
  ajv.addFormat('iri-reference', (s: string) => !/[\s<>"{}|\\^`]/u.test(s));
  ajv.addFormat('idn-email', (s: string) => /^[^\s@]+@[^\s@]+$/u.test(s));
  // bom-1.6 refers to its companions by their SNAPSHOT file names.
  for (const name of ['spdx', 'jsf-0.82', 'cryptography-defs']) {
    const schema = loadJson(path.join(dir, `${name}.SNAPSHOT.schema.json`));
    ajv.addSchema({ ...schema, $id: `http://cyclonedx.org/schema/${name}.SNAPSHOT.schema.json` });
  }
  return ajv.compile(loadJson(path.join(dir, 'bom-1.6.SNAPSHOT.schema.json')));
}
