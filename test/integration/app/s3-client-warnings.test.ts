import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

/*
 * The S3 client of src/app/object-storage.ts is built in a fresh Node process, where the SDK's
 * once-per-process warnings fire. On Node 20 and 21 the SDK's NodeVersionSupportWarning must not
 * print (Node 20.19 is a supported runtime); any other warning still does.
 */
const entry = pathToFileURL(path.resolve('src/app/object-storage.ts')).href;
const script = `
  const { createS3Client } = await import(${JSON.stringify(entry)});
  const client = createS3Client({
    bucket: 'b', prefix: '', region: 'us-east-1', endpoint: 'http://127.0.0.1:9',
    forcePathStyle: true, credentials: { accessKeyId: 'a', secretAccessKey: 's' },
  });
  process.emitWarning('another warning, still shown');
  client.destroy();
`;

describe('S3 client start-up warnings', () => {
  it('prints no Node version support warning from the SDK, and still prints other warnings', () => {
    const env = { ...process.env };
    delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    delete env.NODE_NO_WARNINGS;
    delete env.NODE_OPTIONS;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env,
      encoding: 'utf8',
      timeout: 25_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toContain('another warning, still shown');
    expect(run.stderr).not.toContain('NodeVersionSupportWarning');
  });
});
