import { writeFile } from 'node:fs/promises';
import path from 'node:path';

/** A CLI findings file in `dir`: one finding per (title, severity), on an asset unique to this file. */
export async function cliFile(dir: string, name: string, findings: [string, string][]): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(
    file,
    JSON.stringify({
      tool: { name: 'cli-test', version: '1' },
      findings: findings.map(([title, severity]) => ({ title, severity, cveIds: [], asset: `host-${name}` })),
    }),
  );
  return file;
}
