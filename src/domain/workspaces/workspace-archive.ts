import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Db } from '../../db/pool.js';
import { AppError } from '../../lib/errors.js';
import { tarGzFiles } from '../../lib/tar-writer.js';
import { viewCaseRecord } from '../cases/case-views.js';
import { iterateExportCases } from '../exports/export-store.js';
import { monthOf, nextMonthStart } from '../plans/plans.js';
import { monthlyStatement } from '../usage/usage-report.js';
import {
  archiveWorkspace,
  auditEventPage,
  caseStatusHistoryPage,
  caseTriageHistoryPage,
  type HistoryPage,
} from './archive-store.js';
import { memberRole } from './deletion-store.js';

/** The members of a workspace archive, in order (docs/operations.md#workspace-archive). */
export const ARCHIVE_FILES = [
  'manifest.json',
  'cases.jsonl',
  'case-status-history.jsonl',
  'case-triage-history.jsonl',
  'audit-log.jsonl',
  'usage-statement.json',
] as const;

export interface WorkspaceArchive {
  fileName: string;
  body: Readable;
}

/**
 * The workspace's records as one `.tar.gz` (docs/operations.md#workspace-archive): its cases as
 * the API shows them, their status and triage histories, its audit log and its monthly usage
 * statements since it was created, with a manifest of counts. Owners only. The members are
 * written to a temporary folder first (a tar header needs its member's size), read in keyset
 * pages so memory stays bounded, and the folder is removed when the stream ends or fails.
 */
export async function buildWorkspaceArchive(
  deps: { db: Db; clock: () => Date },
  session: { workspaceId: string; userId: string },
): Promise<WorkspaceArchive> {
  const { db } = deps;
  const ws = await archiveWorkspace(db, session.workspaceId);
  if (!ws) throw new AppError('not_found', 'No such workspace.');
  if ((await memberRole(db, ws.id, session.userId)) !== 'owner') {
    throw new AppError('insufficient_role', "Only an owner can export the workspace's records.");
  }
  const now = deps.clock();
  const dir = await mkdtemp(path.join(tmpdir(), 'ws-archive-'));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    const counts: Record<string, number> = {};
    counts['cases.jsonl'] = await writeLines(path.join(dir, 'cases.jsonl'), casesOf(db, ws.id));
    const history = async (name: string, page: (after: string) => Promise<HistoryPage<{ id: string }>>) => {
      counts[name] = await writeLines(path.join(dir, name), pages(page));
    };
    await history('case-status-history.jsonl', (after) => caseStatusHistoryPage(db, ws.id, after));
    await history('case-triage-history.jsonl', (after) => caseTriageHistoryPage(db, ws.id, after));
    await history('audit-log.jsonl', (after) => auditEventPage(db, ws.id, after));
    const months = [];
    for (let from = new Date(`${monthOf(ws.createdAt).slice(0, 7)}-01T00:00:00Z`); from <= now;) {
      const to = nextMonthStart(from);
      const s = await monthlyStatement(db, ws.id, from, to);
      months.push({ month: from.toISOString().slice(0, 7), lines: s.lines, totals: s.totals });
      from = to;
    }
    counts['usage-statement.json'] = months.length;
    await writeJson(path.join(dir, 'usage-statement.json'), { object: 'usage_statement', months });
    await writeJson(path.join(dir, 'manifest.json'), {
      object: 'workspace_archive',
      workspace: { id: ws.id, name: ws.name, plan: ws.plan, createdAt: ws.createdAt.toISOString() },
      generatedAt: now.toISOString(),
      files: ARCHIVE_FILES.filter((f) => f !== 'manifest.json').map((f) => ({ name: f, records: counts[f] })),
    });
    const body = tarGzFiles(
      ARCHIVE_FILES.map((f) => ({ name: f, file: path.join(dir, f) })),
      now,
    );
    body.once('close', () => void cleanup());
    const stamp = now.toISOString().slice(0, 10);
    return { fileName: `workspace-${ws.id}-${stamp}.tar.gz`, body };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

async function* casesOf(db: Db, workspaceId: string): AsyncGenerator<unknown> {
  for await (const c of iterateExportCases(db, workspaceId, {})) yield viewCaseRecord(c);
}

async function* pages<T extends { id: string }>(
  page: (after: string) => Promise<HistoryPage<T>>,
): AsyncGenerator<Omit<T, 'id'> & { id: string }> {
  let after = '0';
  for (;;) {
    const p = await page(after);
    yield* p.rows;
    if (p.next === null) return;
    after = p.next;
  }
}

async function writeLines(file: string, rows: AsyncIterable<unknown>): Promise<number> {
  const out = createWriteStream(file, { mode: 0o600 });
  let n = 0;
  for await (const row of rows) {
    if (!out.write(`${JSON.stringify(row)}\n`)) await once(out, 'drain');
    n++;
  }
  out.end();
  await once(out, 'finish');
  return n;
}

async function writeJson(file: string, value: unknown): Promise<void> {
  const out = createWriteStream(file, { mode: 0o600 });
  out.end(`${JSON.stringify(value, null, 2)}\n`);
  await once(out, 'finish');
}
