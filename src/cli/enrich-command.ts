/**
 * `npm run admin -- enrich --kev FILE|URL --epss FILE|URL --nvd FILE|URL [--nvd ...] --vulnrichment DIR|FILE|URL`
 *
 * Loads enrichment feeds into PostgreSQL now, the same way the daily job does
 * (docs/triage.md#enrichment). Any subset of sources, at least one; `--nvd` may repeat and applies in
 * order, as does `--vulnrichment` (a folder of CVE JSON 5 records, e.g. a checkout of CISA's
 * repository, or JSON Lines of them). Prints one line per source. Exit codes: 0 all loaded, 1 an import failed (its
 * previous data is kept), 2 bad arguments.
 */
import { parseArgs } from 'node:util';
import type { Pool } from '../db/pool.js';
import { refreshEnrichment, type ImportOutcome, type RefreshSources } from '../domain/enrichment/refresh.js';
import { sourceFromArgument } from '../domain/enrichment/source.js';

export const ENRICH_USAGE =
  'usage: enrich [--kev FILE|URL] [--epss FILE|URL] [--nvd FILE|URL ...] [--vulnrichment DIR|FILE|URL ...]  (at least one; gzip is detected)';

export interface EnrichCommandDeps {
  /** A pg.Pool: imports take one client for their transaction. */
  db: Pool;
  out: (line: string) => void;
}

/**
 * Runs the command. `argv` is what follows `enrich` (a leading `enrich` is tolerated).
 * Never throws for a failed import; resolves to the exit code.
 */
export async function runEnrichCommand(argv: string[], deps: EnrichCommandDeps): Promise<number> {
  const args = argv[0] === 'enrich' ? argv.slice(1) : argv;
  let sources: RefreshSources;
  try {
    sources = parseEnrichArgs(args);
  } catch (err) {
    if (err instanceof HelpRequested) {
      deps.out(ENRICH_USAGE);
      return 0;
    }
    deps.out(`enrich: ${(err as Error).message}`);
    deps.out(ENRICH_USAGE);
    return 2;
  }
  const summary = await refreshEnrichment(deps.db, sources);
  for (const outcome of summary.outcomes) deps.out(describeOutcome(outcome));
  return summary.failed > 0 ? 1 : 0;
}

class HelpRequested extends Error {}

/** Parses the arguments into sources; throws with a message naming the problem. */
export function parseEnrichArgs(args: string[]): RefreshSources {
  const { values, positionals } = parseArgs({
    args,
    options: {
      kev: { type: 'string', multiple: true },
      epss: { type: 'string', multiple: true },
      nvd: { type: 'string', multiple: true },
      vulnrichment: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) throw new HelpRequested();
  if (positionals.length > 0) throw new Error(`unexpected argument "${positionals[0]}"`);
  const sources: RefreshSources = {};
  for (const name of ['kev', 'epss'] as const) {
    const given = values[name] ?? [];
    if (given.length > 1) throw new Error(`--${name} given more than once`);
    const value = given[0];
    if (value !== undefined) sources[name] = sourceFromArgument(nonEmpty(value, name));
  }
  if (values.nvd) sources.nvd = values.nvd.map((v) => sourceFromArgument(nonEmpty(v, 'nvd')));
  if (values.vulnrichment)
    sources.vulnrichment = values.vulnrichment.map((v) => sourceFromArgument(nonEmpty(v, 'vulnrichment')));
  if (!sources.kev && !sources.epss && !sources.nvd && !sources.vulnrichment)
    throw new Error('give at least one of --kev, --epss, --nvd, --vulnrichment');
  return sources;
}

function nonEmpty(value: string, name: string): string {
  if (value.trim() === '' || value.startsWith('--')) throw new Error(`--${name} needs a FILE or URL`);
  return value;
}

/** One line per source, e.g. `kev: 1404 entries (catalog 2025.08.25) from known_exploited_vulnerabilities.json in 0.3 s`. */
export function describeOutcome(o: ImportOutcome): string {
  if (!o.ok) return `${o.source}: FAILED (${o.error.code}): ${o.error.message}`;
  const secs = `${(o.durationMs / 1000).toFixed(1)} s`;
  switch (o.source) {
    case 'kev':
      return `kev: ${o.rows} entries (catalog ${o.catalogVersion}) from ${o.origin} in ${secs}`;
    case 'epss':
      return `epss: ${o.rows} scores (score date ${o.scoreDate ?? 'unknown'}, model ${o.modelVersion ?? 'unknown'}) from ${o.origin} in ${secs}`;
    case 'nvd':
      return `nvd: ${o.rows} CVSS scores upserted, ${o.withoutMetrics} CVEs without metrics, ${o.rejected} rejected removed, from ${o.origin} in ${secs}`;
    case 'vulnrichment':
      return `vulnrichment: ${o.rows} CISA SSVC decisions from ${o.records} records (${o.unscored} unscored) from ${o.origin} in ${secs}`;
  }
}
