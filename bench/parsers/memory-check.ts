/**
 * Memory check (bench only, not a unit test): parses a generated Nessus file (500 MB by
 * default) with the streaming parser in a fresh process and fails when peak RSS exceeds a fixed
 * bound. The bound holds for any file size because nothing in the parser grows with the file.
 *
 *   npx tsx bench/parsers/memory-check.ts                       # 500 MB, bound 300 MB
 *   npx tsx bench/parsers/memory-check.ts --size 1GB --bound 300
 */
import { parseArgs } from 'node:util';
import { generate, parseSize } from './generate.js';
import { measure } from './bench.js';

const { values } = parseArgs({
  options: { size: { type: 'string', default: '500MB' }, bound: { type: 'string', default: '300' } },
});
const bound = Number(values.bound);
const file = await generate('nessus', parseSize(values.size!), values.size!.toLowerCase());
const m = measure(['--mode', 'stream', '--file', file]);
if (!m) {
  console.error('memory check: the parse failed');
  process.exit(1);
}
console.log(
  `memory check: ${values.size} Nessus, ${m.count} findings in ${m.seconds}s (${m.mbPerSec} MB/s), peak RSS ${m.peakRssMb} MB, bound ${bound} MB`,
);
if (m.peakRssMb > bound) {
  console.error(`memory check FAILED: peak RSS ${m.peakRssMb} MB is over the ${bound} MB bound`);
  process.exit(1);
}
console.log('memory check passed');
