import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createParserPool, parseFileInPool, type ParserPool } from '../../../src/workers/parser-pool.js';

// A parse keeps one entry per host for its scope (docs/ingestion.md#rescans). Kept as slices of
// the tokenizer's text, each host name pinned the 64 KiB chunk it came from, so a parse's memory
// grew with the file (a 300 MB Nessus file: +390 MB). With the old generation capped below the
// file's size, such a parse runs out of memory; with copies it needs a few MB for 20,000 hosts.
const HOSTS = 20_000;
const PAD = 'p'.repeat(1_800);

async function writeManyHosts(path: string): Promise<number> {
  const out = createWriteStream(path);
  out.write('<?xml version="1.0" ?>\n<NessusClientData_v2>\n<Report name="many hosts">\n');
  let bytes = 0;
  for (let h = 0; h < HOSTS; h++) {
    const ip = `10.${(h >> 16) & 255}.${(h >> 8) & 255}.${h & 255}`;
    const host =
      `<ReportHost name="host-${h}.example.test"><HostProperties><tag name="host-ip">${ip}</tag>` +
      `<tag name="host-fqdn">host-${h}.example.test</tag></HostProperties>` +
      `<ReportItem port="443" svc_name="www" protocol="tcp" severity="2" pluginID="${10_000 + (h % 50)}" pluginName="Check">` +
      `<description>${PAD}</description></ReportItem></ReportHost>\n`;
    bytes += host.length;
    if (!out.write(host)) await once(out, 'drain');
  }
  out.end('</Report>\n</NessusClientData_v2>\n');
  await once(out, 'finish');
  return bytes;
}

describe('a parse keeps no input chunk alive for its scope', () => {
  let dir: string;
  let file: string;
  let pool: ParserPool;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'scope-memory-'));
    file = join(dir, 'many-hosts.nessus');
    expect(await writeManyHosts(file)).toBeGreaterThan(40 * 1024 * 1024);
    pool = createParserPool({ maxThreads: 1, maxOldGenerationSizeMb: 24 });
  });
  afterAll(async () => {
    await pool?.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  it('parses 40 MB of 20,000 hosts in a thread whose old generation is 24 MB', async () => {
    let findings = 0;
    const result = await parseFileInPool(pool, { path: file, batchSize: 1000 }, async (batch) => {
      findings += batch.length;
    });
    expect(findings).toBe(HOSTS);
    expect(result.scope.hosts).toHaveLength(HOSTS);
    expect(result.scope.hosts[HOSTS - 1]).toEqual({
      ip: '10.0.78.31',
      fqdn: 'host-19999.example.test',
      host: 'host-19999.example.test',
    });
  }, 60_000);
});
