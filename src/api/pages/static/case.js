/* global document */
import { $, api, clearAlert, count, h, show, time } from './console.js';
import { fillCaseTriageKeys, report, startShell } from './shell.js';
import {
  expiresAtOf,
  ownerBody,
  ownerText,
  refusal,
  resetOwnerForm,
  tagChips,
  wireAcceptance,
} from './case-owner.js';

/**
 * One case (docs/console.md#cases): `/api/console/cases/:id` draws the facts, the CVEs with their KEV, EPSS
 * and CVSS, the status history; the evidence pages through `/cases/:id/evidence`. Every value
 * from a scan file (title, asset, excerpt) is written as text.
 */
const id = $('case-head').dataset.caseId;
const STATUS = {
  open: 'Open',
  in_progress: 'In progress',
  resolved: 'Resolved',
  risk_accepted: 'Risk accepted',
  false_positive: 'False positive',
};
let evidenceCursor = null;
const scanNames = new Map();

const pct = (n) => `${(n * 100).toFixed(n < 0.001 ? 3 : 1)}%`;

function fact(term, value) {
  return [h('dt', {}, term), h('dd', {}, value)];
}

function facts(c) {
  const a = c.asset;
  const where = [a.name, a.host, a.ip, a.fqdn, a.component].filter(Boolean);
  return [
    ...fact('Severity', h('span', { class: `sev sev-${c.severity.toLowerCase()}` }, c.severity)),
    ...fact(
      'Status',
      h(
        'span',
        { class: `case-status status-${c.status}`, id: 'case-status-now' },
        STATUS[c.status] || c.status,
      ),
    ),
    ...fact('Owner', h('span', { id: 'case-owner' }, ownerText(c))),
    ...fact('Tags', h('span', { id: 'case-tags' }, tagChips(c) || h('span', { class: 'muted' }, '—'))),
    ...(c.acceptance
      ? fact(
          'Risk accepted until',
          h('span', { id: 'case-acceptance' }, time(c.acceptance.expiresAt, '—', true)),
        )
      : []),
    ...fact(
      'Asset',
      where.length ? h('span', { class: 'asset', id: 'case-asset' }, [...new Set(where)].join(' · ')) : '—',
    ),
    ...(c.port ? fact('Port', `${c.port}${c.protocol ? `/${c.protocol}` : ''}`) : []),
    ...fact('Scanner', h('span', {}, c.scanner, c.ruleId ? h('code', {}, ` ${c.ruleId}`) : null)),
    ...(c.cweIds.length ? fact('CWE', c.cweIds.join(', ')) : []),
    ...fact('CVSS (scanner)', c.cvssScore === null ? '—' : String(c.cvssScore)),
    ...fact('First seen', time(c.firstSeen, '—', true)),
    ...fact('Last seen', time(c.lastSeen, '—', true)),
    ...fact(
      'Due',
      c.dueAt
        ? h(
            'span',
            { id: 'case-due' },
            time(c.dueAt, '—', true),
            c.sla ? ` · ${SLA_STATES[c.sla] || c.sla}` : '',
          )
        : '—',
    ),
    ...fact('Sightings', count(c.sightings)),
  ];
}

/** SLA states as the case page says them (docs/cases.md#due-dates-and-sla). */
const SLA_STATES = {
  on_track: 'on track',
  due_soon: 'due soon',
  breached: 'past due',
  met: 'met',
  missed: 'missed',
};

/** CVEs shown before the rest are folded away: a Windows update names a hundred. */
const CVES_SHOWN = 10;

/**
 * A case's CVEs, most important first (docs/console.md#cases): those in KEV, then by EPSS (highest
 * first, unscored last), then the scanner's order.
 */
function rankCves(cveIds, byCve) {
  const info = (cve) => byCve.get(cve.toUpperCase()) || {};
  return cveIds
    .map((cve, i) => ({ cve, i, kev: info(cve).kev ? 1 : 0, epss: info(cve).epss ?? -1 }))
    .sort((a, b) => b.kev - a.kev || b.epss - a.epss || a.i - b.i)
    .map((x) => x.cve);
}

/** A CVE's KEV cell: listed, "Not listed" when a catalog is loaded, else "Unknown". */
function cveRow(cve, e, kevCatalogLoaded) {
  const nvd = h(
    'a',
    {
      href: `https://nvd.nist.gov/vuln/detail/${encodeURIComponent(cve)}`,
      class: 'cve-id',
      rel: 'noopener noreferrer',
      target: '_blank',
    },
    cve,
  );
  const kev =
    e && e.kev
      ? h(
          'div',
          {},
          h('strong', { class: 'kev-badge' }, 'In KEV'),
          e.kevDateAdded ? h('div', { class: 'hint' }, `added ${e.kevDateAdded}`) : null,
          e.kevDueDate ? h('div', { class: 'hint' }, `due ${e.kevDueDate}`) : null,
          e.kevRansomware ? h('div', { class: 'hint' }, 'used in ransomware campaigns') : null,
        )
      : h('span', { class: 'muted' }, kevCatalogLoaded ? 'Not listed' : 'Unknown');
  const epss =
    e && e.epss !== null
      ? h(
          'span',
          {},
          pct(e.epss),
          e.epssPercentile !== null
            ? h('span', { class: 'hint' }, ` (percentile ${pct(e.epssPercentile)})`)
            : null,
          e.epssDate ? h('div', { class: 'hint' }, `scored ${e.epssDate}`) : null,
        )
      : h('span', { class: 'muted' }, '—');
  const cvss =
    e && e.cvssScore !== null
      ? h(
          'span',
          {},
          String(e.cvssScore),
          h('span', { class: 'hint' }, ` v${e.cvssVersion}`),
          e.cvssVector ? h('div', {}, h('code', { class: 'vector' }, e.cvssVector)) : null,
        )
      : h('span', { class: 'muted' }, '—');
  return h(
    'tr',
    {},
    h('th', { scope: 'row', 'data-label': 'CVE' }, nvd),
    h('td', { 'data-label': 'CISA KEV' }, kev),
    h('td', { 'data-label': 'EPSS' }, epss),
    h('td', { 'data-label': 'CVSS' }, cvss),
  );
}

const PRIORITY = { CRITICAL: 'Critical', HIGH: 'High', MEDIUM: 'Medium', LOW: 'Low', INFO: 'Info' };
const ACTION = {
  PATCH_IMMEDIATELY: 'Patch immediately',
  PATCH_SCHEDULED: 'Patch in the next window',
  MITIGATE: 'Mitigate',
  MONITOR: 'Monitor',
  INVESTIGATE: 'Investigate',
  ACCEPT_RISK: 'Accept the risk',
};

/** The reasoning with the safety policy's notes (lines that name the policy) highlighted. */
function reasoning(text) {
  return h(
    'div',
    { class: 'reasoning' },
    String(text)
      .split(/\n+/)
      .map((line) => h('p', { class: /\bpolicy\b/i.test(line) ? 'policy-note' : null }, line)),
  );
}

function triageFacts(t) {
  return [
    ...fact(
      'Priority',
      h(
        'span',
        { class: `sev sev-${t.priority.toLowerCase()}`, id: 'triage-priority' },
        PRIORITY[t.priority] || t.priority,
      ),
    ),
    ...fact('Action', ACTION[t.recommendedAction] || t.recommendedAction),
    ...fact('Confidence', `${Math.round(t.confidenceScore * 100)}%`),
    ...(t.severityOverride ? fact('Severity override', t.severityOverride) : []),
    ...fact('Reasoning', reasoning(t.reasoning)),
    ...fact('Model', h('code', {}, t.model)),
    ...fact('Policy', h('span', { class: 'policy-note' }, `version ${t.policyVersion}`)),
    ...fact('Triaged', time(t.triagedAt, '—', true)),
    ...fact(
      'Signals then',
      `KEV ${t.enrichment.kev ? 'yes' : 'no'} · EPSS ${t.enrichment.epss === null ? '—' : pct(t.enrichment.epss)} · CVSS ${t.enrichment.cvssScore ?? '—'}`,
    ),
  ];
}

function triageHistoryItem(t) {
  return h(
    'li',
    {},
    time(t.triagedAt, '—', true),
    ' ',
    h('strong', {}, PRIORITY[t.priority] || t.priority),
    ` · ${ACTION[t.recommendedAction] || t.recommendedAction} · ${Math.round(t.confidenceScore * 100)}% · `,
    h('code', {}, t.model),
    h('p', { class: 'note' }, t.reasoning),
  );
}

function drawTriage(c) {
  // The current answer is the case's `triage`; its history's newest entry is the same answer.
  const history = c.triageHistory || [];
  const now = c.triage
    ? { ...(history[0] || { enrichment: { kev: false, epss: null, cvssScore: null } }), ...c.triage }
    : null;
  const earlier = now ? history.slice(1) : history;
  show($('triage-none'), !now);
  show($('triage-now'), Boolean(now));
  if (now) $('triage-now').replaceChildren(...triageFacts(now));
  show($('triage-stale'), Boolean(c.triageStale));
  $('triage-history').replaceChildren(...earlier.map(triageHistoryItem));
  show($('triage-history-wrap'), earlier.length > 0);
}

async function initTriage() {
  const select = await fillCaseTriageKeys($('triage-submit'));
  $('triage-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    $('triage-submit').disabled = true;
    $('triage-card').setAttribute('aria-busy', 'true');
    try {
      await api(`/cases/${id}/triage`, { method: 'POST', body: { key: select.value } });
      draw(await api(`/cases/${id}`));
      clearAlert($('page-error'));
      $('page-notice').textContent = 'Triaged: the answer is shown under AI triage.';
      show($('page-notice'), true);
    } catch (err) {
      report(err);
    } finally {
      $('triage-submit').disabled = false;
      $('triage-card').setAttribute('aria-busy', 'false');
    }
  });
}

function historyItem(x) {
  return h(
    'li',
    {},
    time(x.at, '—', true),
    ' ',
    h('span', {}, x.from ? `${STATUS[x.from] || x.from} → ` : '', h('strong', {}, STATUS[x.to] || x.to)),
    ' by ',
    h('code', { class: 'actor' }, x.actor),
    x.note ? h('p', { class: 'note' }, x.note) : null,
  );
}

async function scanName(scanId) {
  if (!scanNames.has(scanId)) {
    scanNames.set(
      scanId,
      api(`/scans/${scanId}`)
        .then((s) => s.name || scanId.slice(0, 8))
        .catch(() => scanId.slice(0, 8)),
    );
  }
  return scanNames.get(scanId);
}

async function evidenceItem(e) {
  return h(
    'li',
    { dataset: { evidenceId: e.id } },
    h(
      'p',
      { class: 'evidence-head' },
      time(e.seenAt, '—', true),
      ' in scan ',
      h(
        'a',
        { href: `/cases?scan=${encodeURIComponent(e.scanId)}`, class: 'scan-name' },
        await scanName(e.scanId),
      ),
    ),
    h('pre', { class: 'excerpt', tabindex: '0' }, e.rawExcerpt),
    e.scannerOutput
      ? h('details', {}, h('summary', {}, 'Scanner output'), h('pre', { class: 'excerpt' }, e.scannerOutput))
      : null,
  );
}

async function appendEvidence(items, nextCursor) {
  const list = $('evidence');
  for (const e of items) list.append(await evidenceItem(e));
  evidenceCursor = nextCursor;
  show($('evidence-more'), Boolean(nextCursor));
  if (list.children.length === 0)
    list.append(h('li', { class: 'empty' }, 'No sightings in completed scans.'));
}

function draw(c) {
  document.title = `${c.title} · Case · VulnTriage console`;
  $('page-title').textContent = c.title;
  $('case-sub').textContent = `${c.scanner} · ${c.id}`;
  $('case-facts').replaceChildren(...facts(c));
  $('case-status').value = c.status;
  const byCve = new Map(c.enrichment.map((e) => [e.cveId, e]));
  const ranked = rankCves(c.cveIds, byCve);
  const shown = ranked.length > CVES_SHOWN + 2 ? ranked.slice(0, CVES_SHOWN) : ranked;
  const folded = ranked.slice(shown.length);
  const rowOf = (cve) => cveRow(cve, byCve.get(cve.toUpperCase()), c.kevCatalogLoaded);
  $('cves-body').replaceChildren(...shown.map(rowOf));
  $('cves-more-body').replaceChildren(...folded.map(rowOf));
  $('cves-more-summary').textContent = `${count(folded.length)} more CVEs (lower EPSS, not in KEV)`;
  show($('cves-more'), folded.length > 0);
  show($('cves-table'), c.cveIds.length > 0);
  show($('cves-empty'), c.cveIds.length === 0);
  $('history').replaceChildren(...c.history.slice().reverse().map(historyItem));
  show($('history-empty'), c.history.length === 0);
  drawTriage(c);
  drawLinks(c.links || []);
}

/** The case's issues in Jira or GitHub (workflows); a link only to an http(s) address. */
function drawLinks(links) {
  $('links').replaceChildren(
    ...links.map((l) =>
      h(
        'li',
        {},
        `${l.kind === 'jira' ? 'Jira' : l.kind === 'github' ? 'GitHub' : 'Webhook'} `,
        l.url && /^https?:\/\//.test(l.url)
          ? h('a', { href: l.url, rel: 'noopener noreferrer', target: '_blank' }, l.externalId || l.url)
          : h('span', {}, l.externalId || '—'),
        ` (${l.state})`,
      ),
    ),
  );
  show($('links-card'), links.length > 0);
}

async function start() {
  const me = await startShell();
  if (!me) return;
  try {
    const c = await api(`/cases/${id}`);
    draw(c);
    $('evidence').replaceChildren();
    await appendEvidence(c.evidence, c.evidenceNextCursor);
  } catch (err) {
    report(err);
  } finally {
    $('case-card').setAttribute('aria-busy', 'false');
  }
  if (me.role === 'admin' || me.role === 'owner') initTriage().catch(report);

  $('evidence-more').addEventListener('click', async () => {
    try {
      const page = await api(`/cases/${id}/evidence?cursor=${encodeURIComponent(evidenceCursor)}`);
      await appendEvidence(page.data, page.nextCursor);
    } catch (err) {
      report(err);
    }
  });

  $('status-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = { status: $('case-status').value, caseIds: [id] };
    const note = $('status-note').value.trim();
    if (note) body.note = note;
    const expiresAt = expiresAtOf($('case-status'), $('status-expires'));
    if (expiresAt) body.expiresAt = expiresAt;
    try {
      await api('/cases/status', { method: 'POST', body });
      $('status-note').value = '';
      draw(await api(`/cases/${id}`));
      clearAlert($('page-error'));
      $('page-notice').textContent = `Status saved: ${STATUS[body.status]}.`;
      show($('page-notice'), true);
    } catch (err) {
      report(refusal(err));
    }
  });
  wireAcceptance($('case-status'), $('status-expires'));

  $('case-owner-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const change = ownerBody('case-owner');
    if (!change) {
      report(new Error('Name an owner, tick "Remove the owner", or give tags to add or remove.'));
      return;
    }
    try {
      await api('/cases/owner', { method: 'POST', body: { ...change, caseIds: [id] } });
      resetOwnerForm('case-owner');
      draw(await api(`/cases/${id}`));
      clearAlert($('page-error'));
      $('page-notice').textContent = 'Owner and tags saved.';
      show($('page-notice'), true);
    } catch (err) {
      report(refusal(err));
    }
  });
}

void start();
