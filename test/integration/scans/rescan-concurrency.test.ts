import { createReadStream } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../../helpers/test-app.js';
import { startScanApp, type ScanTestApp } from '../../helpers/scan-app.js';
import { parsedScan } from '../../helpers/parsing-scan.js';
import { parseScanToArray, type Finding, type ParseResult } from '../../../src/parsers/index.js';
import { completeScan } from '../../../src/domain/scans/ingest-store.js';
import { lockScanScope } from '../../../src/domain/cases/case-resolution.js';

/**
 * docs/ingestion.md#rescans: two scans of one scope completing at once take turns on the scope's
 * lock, so the later completion sees the earlier one's sightings; a scan of another scope does
 * not wait for them.
 */
const FIXTURES = path.resolve('test/fixtures/scans');

let t: ScanTestApp;
let workspaceId: string;
let nessus: { findings: Finding[]; result: ParseResult };
let openvas: { findings: Finding[]; result: ParseResult };

beforeAll(async () => {
  t = await startScanApp({ worker: false });
  ({ workspaceId } = await signUp(t.app));
  nessus = await parseScanToArray(createReadStream(path.join(FIXTURES, 'rescan/nessus-first.nessus')));
  openvas = await parseScanToArray(createReadStream(path.join(FIXTURES, 'openvas/one_vuln.xml')));
});
afterAll(async () => {
  await t?.close();
});

/** A scan of this workspace in `parsing` with `findings` stored, as its worker leaves it before completion. */
const parsed = (findings: Finding[], format: 'nessus' | 'openvas' = 'nessus') =>
  parsedScan(t.infra.pool, workspaceId, format, findings);

const complete = (scanId: string, result: ParseResult) =>
  completeScan(t.infra.pool, scanId, { bytes: 1, notes: [], scope: result.scope });

async function waitingAdvisoryLocks(): Promise<number> {
  const { rows } = await t.infra.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks
      WHERE locktype = 'advisory' AND NOT granted
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return rows[0]!.n;
}

async function scanCounts(scanId: string) {
  const { rows } = await t.infra.pool.query<{ status: string; resolved: number; reopened: number }>(
    `SELECT status, resolved_cases AS resolved, reopened_cases AS reopened FROM scans WHERE id = $1`,
    [scanId],
  );
  return rows[0]!;
}

async function statusOf(fingerprint: string): Promise<string> {
  const { rows } = await t.infra.pool.query<{ status: string }>(
    `SELECT status FROM cases WHERE workspace_id = $1 AND fingerprint = $2`,
    [workspaceId, fingerprint],
  );
  return rows[0]!.status;
}

describe('concurrent completions of one scope', () => {
  it('a completion waits while another holds its scope; another scope does not', async () => {
    await complete(await parsed(nessus.findings), nessus.result);
    const rescan = await parsed(nessus.findings.slice(1));
    const elsewhere = await parsed(openvas.findings, 'openvas');

    const holder = await t.infra.pool.connect();
    try {
      await holder.query('BEGIN');
      const scope = nessus.result.scope;
      expect(await lockScanScope(holder, workspaceId, { ...scope, hostless: null })).toBe(3);
      let done = false;
      const waiting = complete(rescan, nessus.result).then((r) => {
        done = true;
        return r;
      });
      while ((await waitingAdvisoryLocks()) === 0) await new Promise((r) => setTimeout(r, 20));
      expect(done).toBe(false);
      // OpenVAS on another host: its own scope's lock, free.
      expect(await complete(elsewhere, openvas.result)).toBe(true);
      expect(done).toBe(false);
      expect((await scanCounts(rescan)).status).toBe('parsing');
      await holder.query('COMMIT');
      expect(await waiting).toBe(true);
    } finally {
      holder.release();
    }
    expect(await scanCounts(rescan)).toEqual({ status: 'completed', resolved: 1, reopened: 0 });
    expect(await statusOf(nessus.findings[0]!.fingerprint)).toBe('resolved');
  });

  it('two rescans of one scope at once: one after the other, the later resolving what only the earlier saw', async () => {
    const all = nessus.findings;
    // Reopen everything first.
    await complete(await parsed(all), nessus.result);
    const first = all[0]!.fingerprint;
    const last = all[all.length - 1]!.fingerprint;
    const a = await parsed(all.slice(0, -1)); // sees all but the last
    const b = await parsed(all.slice(1)); // sees all but the first
    expect(await Promise.all([complete(a, nessus.result), complete(b, nessus.result)])).toEqual([true, true]);

    const ca = await scanCounts(a);
    const cb = await scanCounts(b);
    const states = [await statusOf(first), await statusOf(last)].sort();
    // Whichever completed second resolved the one case only the first saw, and reopened the other.
    expect(states).toEqual(['open', 'resolved']);
    expect(ca.resolved + cb.resolved).toBe(2);
    expect(ca.reopened + cb.reopened).toBe(1);
    const { rows } = await t.infra.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM cases WHERE workspace_id = $1 AND status = 'resolved'`,
      [workspaceId],
    );
    expect(rows[0]!.n).toBe(1);
  });
});
