#!/usr/bin/env node
// The `vuln-triage` command (package.json "bin"). Installed from the registry or a packed
// tarball it runs the compiled dist/. In the repository it runs the TypeScript sources through
// tsx (a dependency of the repository, not of this package), the SDK's sources included.
import { existsSync } from 'node:fs';
import { register as registerHooks } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const source = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const built = fileURLToPath(new URL('../dist/main.js', import.meta.url));

let entry;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  // The workspace packages export their sources under this condition (docs/clients.md#inside-the-repository).
  const hook =
    'export async function resolve(specifier, context, next) {' +
    " return next(specifier, { ...context, conditions: [...context.conditions, 'vuln-triage-source'] }); }";
  registerHooks(`data:text/javascript,${encodeURIComponent(hook)}`);
  entry = source;
} else {
  entry = built;
}
const { main } = await import(pathToFileURL(entry).href);
process.exitCode = await main(process.argv);
