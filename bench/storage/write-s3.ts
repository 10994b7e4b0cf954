/**
 * The storage write alone, in one process: a file streamed into `ScanStorage.create` and
 * committed, on disk (the baseline) and on S3 with several part sizes and parts in flight
 * (`S3WriteTuning` of src/domain/scans/s3-scan-storage.ts). Variants alternate within each round.
 * Reports seconds, MB/s, this process's CPU seconds and its peak RSS (VmHWM, reset before each).
 *
 *   npx tsx bench/storage/write-s3.ts [--size 100MB] [--rounds 3] [--variants disk,8x2,8x4,16x4,5x2]
 *
 * A variant `PxQ` is parts of P MiB, Q in flight.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { createS3Client } from '../../src/app/object-storage.js';
import { createS3ScanStorage } from '../../src/domain/scans/s3-scan-storage.js';
import { createLocalScanStorage, type ScanStorage } from '../../src/domain/scans/scan-storage.js';
import { generate, parseSize } from '../parsers/generate.js';
import { benchS3Env, cleanS3Prefix, median, memoryOf, resetPeak } from './deployment.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '100MB' },
    rounds: { type: 'string', default: '3' },
    variants: { type: 'string', default: 'disk,8x2,8x4,16x4,5x2' },
  },
});
const file = await generate('nessus', parseSize(values.size!), values.size!.toLowerCase());
const bytes = statSync(file).size;
const env = benchS3Env();
const client = createS3Client({
  bucket: env.S3_BUCKET!,
  prefix: env.S3_PREFIX!,
  region: env.S3_REGION!,
  endpoint: env.S3_ENDPOINT!,
  forcePathStyle: true,
  credentials: { accessKeyId: env.S3_ACCESS_KEY_ID!, secretAccessKey: env.S3_SECRET_ACCESS_KEY! },
});
const dir = mkdtempSync(path.join(tmpdir(), 'vt-bench-write-'));
const stores = new Map<string, ScanStorage>();
for (const v of values.variants!.split(',')) {
  if (v === 'disk') stores.set(v, createLocalScanStorage(dir));
  else {
    const [p, q] = v.split('x').map(Number);
    stores.set(
      v,
      createS3ScanStorage(
        client,
        { bucket: env.S3_BUCKET!, prefix: env.S3_PREFIX! },
        {
          partSize: p! * 2 ** 20,
          queueSize: q!,
        },
      ),
    );
  }
}
const ws = randomUUID();
const results: { variant: string; round: number; s: number; cpu: number; peak: number; load: number }[] = [];
try {
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const [variant, store] of stores) {
      const key = `${ws}/${randomUUID()}`;
      global.gc?.();
      resetPeak(process.pid);
      const load = loadavg()[0]!;
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const w = await store.create(key);
      await pipeline(createReadStream(file), w.stream);
      await w.commit();
      const s = (performance.now() - t0) / 1000;
      const c = process.cpuUsage(c0);
      const row = {
        variant,
        round,
        s: +s.toFixed(2),
        cpu: +((c.user + c.system) / 1e6).toFixed(2),
        peak: memoryOf(process.pid).peakMiB,
        load: +load.toFixed(1),
      };
      results.push(row);
      console.log(JSON.stringify(row));
      await store.remove(key);
    }
  }
  const base = median(results.filter((r) => r.variant === 'disk').map((r) => r.s));
  console.log(
    `\n${Math.round(bytes / 2 ** 20)} MiB written, ${values.rounds} rounds, Node ${process.version}`,
  );
  console.log('variant | median s | MB/s | speed ÷ disk | CPU s (median) | peak RSS MiB (max)');
  for (const variant of stores.keys()) {
    const rs = results.filter((r) => r.variant === variant);
    const s = median(rs.map((r) => r.s));
    console.log(
      `${variant} | ${s.toFixed(2)} | ${(bytes / 1e6 / s).toFixed(1)} | ${(base / s).toFixed(2)} | ` +
        `${median(rs.map((r) => r.cpu)).toFixed(2)} | ${Math.max(...rs.map((r) => r.peak))}`,
    );
  }
} finally {
  client.destroy();
  rmSync(dir, { recursive: true, force: true });
  await cleanS3Prefix(env);
}
