import { usageError, EXIT, type ExitCode } from '../errors.js';
import type { Context } from '../context.js';
import { filterQuery, type FilterOptions } from '../filters.js';
import { table, truncate } from '../output.js';

export interface CasesListOptions extends FilterOptions {
  limit?: string;
  cursor?: string;
  all?: boolean;
}

/** A case as `GET /api/v1/cases` lists it (the fields of the table). */
interface CaseView {
  id: string;
  title: string;
  severity: string;
  status: string;
  cveIds: string[];
  asset: {
    name: string | null;
    host: string | null;
    ip: string | null;
    fqdn: string | null;
    component: string | null;
  };
  port: number | null;
  lastSeen: string;
  sightings: number;
  priority?: string | null;
}

interface CasePage {
  object: 'list';
  data: CaseView[];
  nextCursor: string | null;
}

const assetOf = (c: CaseView): string => {
  const a = c.asset.name ?? c.asset.fqdn ?? c.asset.host ?? c.asset.ip ?? c.asset.component ?? '-';
  return c.port ? `${a}:${c.port}` : a;
};

/**
 * `vuln-triage cases list`: one page (`--limit`, `--cursor`) or every page (`--all`) of the
 * workspace's cases with the list filters; a table for people, the list envelope with `--json`.
 */
export async function casesList(ctx: Context, o: CasesListOptions): Promise<ExitCode> {
  if (o.limit !== undefined && !/^\d+$/.test(o.limit))
    throw usageError('--limit takes a whole number (1 to 200)');
  const query = { ...filterQuery(o), limit: o.limit ?? (o.all ? '200' : undefined) };
  const data: CaseView[] = [];
  let cursor = o.cursor;
  let next: string | null = null;
  do {
    const page = await ctx.client.json<CasePage>('GET', '/api/v1/cases', { query: { ...query, cursor } });
    data.push(...page.data);
    next = page.nextCursor;
    cursor = next ?? undefined;
  } while (o.all && cursor);

  if (ctx.json) {
    ctx.print(JSON.stringify({ object: 'list', data, nextCursor: next }, null, 2));
    return EXIT.ok;
  }
  const s = ctx.style;
  const withPriority = data.some((c) => c.priority);
  ctx.print(
    table(
      [
        'ID',
        'SEVERITY',
        ...(withPriority ? ['PRIORITY'] : []),
        'STATUS',
        'SEEN',
        'LAST SEEN',
        'ASSET',
        'CVE',
        'TITLE',
      ],
      data.map((c) => [
        c.id,
        s.severity(c.severity),
        ...(withPriority ? [c.priority ? s.severity(c.priority) : '-'] : []),
        c.status,
        String(c.sightings),
        c.lastSeen.slice(0, 10),
        truncate(assetOf(c), 32),
        c.cveIds.length === 0
          ? '-'
          : c.cveIds.length === 1
            ? c.cveIds[0]!
            : `${c.cveIds[0]} +${c.cveIds.length - 1}`,
        truncate(c.title, 60),
      ]),
      [withPriority ? 4 : 3],
    ),
  );
  if (data.length === 0) ctx.print(s.dim('No cases match.'));
  if (next) ctx.print(s.dim(`More: --cursor ${next} (or --all)`));
  return EXIT.ok;
}
