#!/usr/bin/env node
// The `vuln-triage` command (package.json "bin"). From a clone it runs the TypeScript sources
// through tsx (a runtime dependency); from a built package, the compiled file.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const source = fileURLToPath(new URL('../src/cli/vuln-triage/main.ts', import.meta.url));
const built = fileURLToPath(new URL('../dist/src/cli/vuln-triage/main.js', import.meta.url));

let entry;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  entry = source;
} else {
  entry = built;
}
const { main } = await import(pathToFileURL(entry).href);
process.exitCode = await main(process.argv);
