/* global document, location, URLSearchParams, setTimeout */
import { $, api, clearAlert, count, h, show, time } from './console.js';
import { fillCaseTriageKeys, queryOf, report, SEVERITIES, startShell } from './shell.js';
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
 * Cases (docs/console.md#cases). The filter form is a GET form, so the URL is the state; this script fills the
 * form from the URL, passes exactly the API's own parameters (the form's `data-params`, taken
 * from the `GET /api/v1/cases` schema) to `/api/console/cases` and `/cases/counts`, draws the
 * table, and runs the bulk actions on the selection or on the whole filter.
 */
const params = new URLSearchParams(location.search);
const form = $('case-filters');
const CASE_PARAMS = form.dataset.params.split(',');
const FILTERS = CASE_PARAMS.filter((p) => p !== 'limit' && p !== 'cursor' && p !== 'sort');
/** Parameters that take comma-separated lists in the API and arrays in an export job's filter. */
const LISTS = new Set(['severity', 'status', 'priority', 'action', 'sla']);
const BOOLEANS = new Set(['kev', 'triaged', 'stale', 'unassigned']);
const NUMBERS = new Set(['epss', 'epssMin']);
const STATUS = {
  open: 'Open',
  in_progress: 'In progress',
  resolved: 'Resolved',
  risk_accepted: 'Risk accepted',
  false_positive: 'False positive',
};
const selected = new Set();
let matching = 0;

/** The URL's value of a filter; a list given as repeated parameters reads as one comma list. */
const valueOf = (name) => params.getAll(name).filter(Boolean).join(',');

function fillForm() {
  for (const el of form.elements) {
    if (!el.name || !params.has(el.name)) continue;
    const value = valueOf(el.name);
    if (el.type === 'checkbox') el.checked = value.split(',').includes(el.value);
    else if (el.type === 'hidden') {
      el.value = value;
      el.disabled = false;
    } else el.value = value;
  }
}

/** Empty fields stay out of the URL and checked lists become one comma list, like the API takes them. */
form.addEventListener('formdata', (event) => {
  const fd = event.formData;
  for (const name of new Set([...fd.keys()])) {
    const values = fd.getAll(name).filter((v) => v !== '');
    fd.delete(name);
    if (values.length) fd.set(name, values.join(','));
  }
});

/** The filter as an export job or a bulk change takes it: lists as arrays, booleans and numbers typed. */
function filterBody() {
  const filter = {};
  for (const name of FILTERS) {
    const value = valueOf(name);
    if (!value) continue;
    if (LISTS.has(name)) filter[name] = value.split(',');
    else if (BOOLEANS.has(name)) filter[name] = value === 'true';
    else if (NUMBERS.has(name)) filter[name] = Number(value);
    else filter[name] = value;
  }
  return filter;
}

function severityBadge(s) {
  return h('span', { class: `sev sev-${s.toLowerCase()}` }, s[0] + s.slice(1).toLowerCase());
}

function assetText(a) {
  return a.name || a.host || a.fqdn || a.ip || a.component || '—';
}

const PRIORITIES = [...SEVERITIES, 'UNTRIAGED'];

function priorityCell(c) {
  if (!c.triage) return h('span', { class: 'muted' }, 'Not triaged');
  return h(
    'span',
    {},
    h(
      'span',
      { class: `sev sev-${c.triage.priority.toLowerCase()} priority` },
      c.triage.priority[0] + c.triage.priority.slice(1).toLowerCase(),
    ),
    c.triageStale
      ? h('span', { class: 'stale-badge', title: 'The exploit signals changed since this triage' }, ' stale')
      : null,
  );
}

const epssText = (e) => (e === null || e === undefined ? '—' : `${(e * 100).toFixed(e < 0.001 ? 3 : 1)}%`);

/**
 * The most important CVE (in KEV first, then the highest EPSS: the list's `leadCveId`) and how
 * many more, so a case of 100 CVEs keeps a one-line cell (docs/console.md#cases).
 */
function cveCell(c) {
  if (!c.cveIds.length) return h('span', { class: 'muted' }, '—');
  const lead = c.leadCveId || c.cveIds[0];
  const rest = c.cveIds.length - 1;
  return h(
    'span',
    { class: 'cves', title: rest ? c.cveIds.join(', ') : null },
    h('span', { class: 'lead-cve' }, lead),
    rest ? h('span', { class: 'hint more-cves' }, ` +${count(rest)} more`) : null,
  );
}

function row(c) {
  const cell = (label, content, cls) => h('td', { 'data-label': label, class: cls }, content);
  const box = h('input', {
    type: 'checkbox',
    class: 'select-case',
    value: c.id,
    'aria-label': `Select case ${c.title}`,
  });
  box.checked = selected.has(c.id);
  box.addEventListener('change', () => {
    if (box.checked) selected.add(c.id);
    else selected.delete(c.id);
    updateScope();
  });
  return h(
    'tr',
    { dataset: { caseId: c.id, status: c.status, severity: c.severity } },
    h('td', { class: 'select' }, box),
    cell('Priority', priorityCell(c)),
    cell('Severity', severityBadge(c.severity)),
    h(
      'th',
      { scope: 'row', 'data-label': 'Case' },
      h('a', { href: `/cases/${c.id}`, class: 'case-title' }, c.title),
      h('div', { class: 'hint' }, c.scanner, c.kev ? h('span', { class: 'kev-badge' }, ' KEV') : null),
      tagChips(c),
    ),
    cell('Asset', h('span', { class: 'asset' }, assetText(c.asset))),
    cell('CVEs', cveCell(c)),
    cell('EPSS', epssText(c.epss), 'num'),
    cell('Status', h('span', { class: `case-status status-${c.status}` }, STATUS[c.status] || c.status)),
    cell('Owner', ownerText(c)),
    cell('Due', dueCell(c)),
    cell('Last seen', time(c.lastSeen, '—', true)),
    cell('Sightings', count(c.sightings), 'num'),
  );
}

/** SLA states as the list says them (docs/cases.md#due-dates-and-sla). */
const SLA = {
  on_track: 'On track',
  due_soon: 'Due soon',
  breached: 'Past due',
  met: 'Met',
  missed: 'Missed',
};

/** The due day and the SLA state; a dash without a due date. */
function dueCell(c) {
  if (!c.dueAt) return '—';
  return h(
    'span',
    { class: `sla sla-${c.sla || 'none'}` },
    c.dueAt.slice(0, 10),
    c.sla ? h('div', { class: 'hint' }, SLA[c.sla] || c.sla) : null,
  );
}

function updateScope() {
  $('scope-selected').textContent = `The selected cases (${count(selected.size)})`;
  $('scope-filter').textContent = `Every case matching the filters (${count(matching)})`;
}

function pager(nextCursor) {
  const base = queryOf(params, [...FILTERS, 'sort', 'limit']);
  $('first-page').href = `/cases${base}`;
  show($('first-page'), params.has('cursor'));
  if (nextCursor) {
    const next = new URLSearchParams(base.slice(1));
    next.set('cursor', nextCursor);
    $('next-page').href = `/cases?${next}`;
  }
  show($('next-page'), Boolean(nextCursor));
}

let directExportMax = 0;

async function loadCounts() {
  const counts = await api(`/cases/counts${queryOf(params, FILTERS)}`);
  matching = counts.total;
  directExportMax = counts.directExportMax;
  $('count-total').textContent = count(counts.total);
  for (const s of SEVERITIES) $(`count-severity-${s}`).textContent = count(counts.bySeverity[s] || 0);
  for (const p of PRIORITIES) {
    const link = $(`count-priority-${p}`);
    link.textContent = count(counts.byPriority[p] || 0);
    // Each count is a link to the same filter narrowed to that priority.
    const q = new URLSearchParams(queryOf(params, [...FILTERS, 'sort']).slice(1));
    if (p === 'UNTRIAGED') {
      q.delete('priority');
      q.set('triaged', 'false');
    } else q.set('priority', p);
    link.href = `/cases?${q}`;
  }
  updateScope();
}

async function loadCases() {
  const page = await api(`/cases${queryOf(params, CASE_PARAMS)}`);
  $('cases-body').replaceChildren(...page.data.map(row));
  $('select-all').checked = page.data.length > 0 && page.data.every((c) => selected.has(c.id));
  show($('cases-empty'), page.data.length === 0);
  show($('cases-wrap'), page.data.length > 0);
  pager(page.nextCursor);
}

function notify(text) {
  clearAlert($('page-error'));
  $('page-notice').textContent = text;
  show($('page-notice'), true);
}

function initSelection() {
  $('select-all').addEventListener('change', (e) => {
    for (const box of document.querySelectorAll('.select-case')) {
      box.checked = e.target.checked;
      if (box.checked) selected.add(box.value);
      else selected.delete(box.value);
    }
    updateScope();
  });
}

function initBulk() {
  const bulk = $('bulk-form');
  bulk.addEventListener('submit', async (e) => {
    e.preventDefault();
    const scope = bulk.elements.scope.value;
    if (scope === 'selected' && selected.size === 0) {
      report(new Error('Select one or more cases first, or apply to every case matching the filters.'));
      return;
    }
    const body = { status: $('bulk-status').value };
    const note = $('bulk-note').value.trim();
    if (note) body.note = note;
    const expiresAt = expiresAtOf($('bulk-status'), $('bulk-expires'));
    if (expiresAt) body.expiresAt = expiresAt;
    if (scope === 'selected') body.caseIds = [...selected];
    else body.filter = filterBody();
    $('bulk-submit').disabled = true;
    try {
      const r = await api('/cases/status', { method: 'POST', body });
      notify(
        `Status set to ${STATUS[body.status]} on ${count(r.changed)} case${r.changed === 1 ? '' : 's'}` +
          (r.unchanged ? `; ${count(r.unchanged)} already had it` : '') +
          (r.notFound ? `; ${count(r.notFound)} not found` : '') +
          '.',
      );
      selected.clear();
      $('bulk-note').value = '';
      await Promise.all([loadCases(), loadCounts()]);
    } catch (err) {
      report(refusal(err));
    } finally {
      $('bulk-submit').disabled = false;
    }
  });
  wireAcceptance($('bulk-status'), $('bulk-expires'));

  $('bulk-owner-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const change = ownerBody('bulk-owner');
    const scope = bulk.elements.scope.value;
    if (!change) {
      report(new Error('Name an owner, tick "Remove the owner", or give tags to add or remove.'));
      return;
    }
    if (scope === 'selected' && selected.size === 0) {
      report(new Error('Select one or more cases first, or apply to every case matching the filters.'));
      return;
    }
    const body = {
      ...change,
      ...(scope === 'selected' ? { caseIds: [...selected] } : { filter: filterBody() }),
    };
    $('bulk-owner-submit').disabled = true;
    try {
      const r = await api('/cases/owner', { method: 'POST', body });
      notify(
        `Owner and tags set on ${count(r.updated)} case${r.updated === 1 ? '' : 's'}` +
          (r.tooManyTags ? `; ${count(r.tooManyTags)} left as they were (more than 20 tags)` : '') +
          (r.notFound ? `; ${count(r.notFound)} not found` : '') +
          '.',
      );
      resetOwnerForm('bulk-owner');
      await loadCases();
    } catch (err) {
      report(refusal(err));
    } finally {
      $('bulk-owner-submit').disabled = false;
    }
  });
}

function initExport() {
  const exportForm = $('export-form');
  const bar = $('export-progress');
  const status = $('export-status');
  const link = $('export-link');
  const poll = (id) =>
    new Promise((resolve, reject) => {
      const tick = async () => {
        try {
          const job = await api(`/exports/${id}`);
          if (job.rowsTotal) bar.value = Math.round((job.rowsWritten / job.rowsTotal) * 100);
          status.textContent = `Exporting: ${count(job.rowsWritten)} of ${count(job.rowsTotal || 0)} cases written.`;
          if (job.status === 'completed') resolve(job);
          else if (job.status === 'failed')
            reject(new Error(`The export failed: ${job.error || 'no reason given'}.`));
          else setTimeout(tick, 1000);
        } catch (err) {
          reject(err);
        }
      };
      void tick();
    });

  exportForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const format = $('export-format').value;
    show(link, false);
    $('export-submit').disabled = true;
    try {
      if (matching <= directExportMax) {
        const q = new URLSearchParams(queryOf(params, FILTERS).slice(1));
        q.set('format', format);
        link.href = `/api/console/exports/cases?${q}`;
        status.textContent = `${count(matching)} cases: the download starts now.`;
        show(link, true);
        link.click();
      } else {
        bar.value = 0;
        show(bar, true);
        status.textContent = 'Export queued…';
        const job = await api('/exports', { method: 'POST', body: { format, filter: filterBody() } });
        const done = await poll(job.id);
        bar.value = 100;
        link.href = done.downloadUrl;
        status.textContent = `Export ready: ${count(done.rowsWritten)} cases. The link works for 24 hours.`;
        show(link, true);
        link.focus();
      }
    } catch (err) {
      status.textContent = '';
      report(err);
    } finally {
      $('export-submit').disabled = false;
    }
  });
}

/** The filter as `POST /api/v1/cases/triage` takes it: the query's own names and comma lists, typed. */
function queryFilters() {
  const filters = {};
  for (const name of FILTERS) {
    const value = valueOf(name);
    if (!value) continue;
    if (BOOLEANS.has(name)) filters[name] = value === 'true';
    else if (NUMBERS.has(name)) filters[name] = Number(value);
    else filters[name] = value;
  }
  return filters;
}

/** The selection of the "Apply to" choice, as the triage routes take it; null when nothing is selected. */
function triageSelection() {
  const scope = $('bulk-form').elements.scope.value;
  if (scope === 'selected') return selected.size ? { caseIds: [...selected] } : null;
  return { filters: queryFilters() };
}

async function initTriage() {
  const select = await fillCaseTriageKeys($('triage-check'));
  const confirm = $('triage-confirm');
  const status = $('triage-status');
  let pending = null;

  $('triage-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    status.textContent = '';
    const selection = triageSelection();
    if (!selection) {
      report(new Error('Select one or more cases first, or apply to every case matching the filters.'));
      return;
    }
    try {
      const p = await api('/cases/triage/preview', { method: 'POST', body: selection });
      const m = p.month;
      let text =
        `This triages ${count(p.aiCalls)} of ${count(p.cases)} case${p.cases === 1 ? '' : 's'}: ` +
        `${count(p.aiCalls)} AI call${p.aiCalls === 1 ? '' : 's'}. ` +
        `This month: ${count(m.remaining)} of ${count(m.limit)} AI calls left` +
        (m.reserved ? ` (${count(m.reserved)} held by running triage)` : '') +
        `; ${count(Math.max(0, m.remaining - p.aiCalls))} left afterwards.`;
      if (p.skippedForQuota) text += ` ${count(p.skippedForQuota)} cases are skipped: riskiest first.`;
      $('triage-summary').textContent = text;
      $('triage-go').textContent = `Triage ${count(p.aiCalls)} case${p.aiCalls === 1 ? '' : 's'}`;
      $('triage-go').disabled = p.aiCalls === 0;
      pending = selection;
      show(confirm, true);
      $('triage-go').focus();
    } catch (err) {
      report(err);
    }
  });

  $('triage-cancel').addEventListener('click', () => {
    pending = null;
    show(confirm, false);
    $('triage-check').focus();
  });

  $('triage-go').addEventListener('click', async () => {
    if (!pending) return;
    $('triage-go').disabled = true;
    try {
      const r = await api('/cases/triage', { method: 'POST', body: { key: select.value, ...pending } });
      show(confirm, false);
      status.textContent =
        `AI triage started for ${count(r.total)} case${r.total === 1 ? '' : 's'}` +
        (r.skippedForQuota ? `; ${count(r.skippedForQuota)} skipped (no AI calls left this month)` : '') +
        '. Answers appear on each case as they arrive.';
      pending = null;
    } catch (err) {
      report(err);
    } finally {
      $('triage-go').disabled = false;
    }
  });
}

async function start() {
  const me = await startShell();
  if (!me) return;
  fillForm();
  initSelection();
  initBulk();
  initExport();
  // Triage bills a key, and only an admin may list them (docs/console.md#members-and-roles).
  if (me.role === 'admin' || me.role === 'owner') initTriage().catch(report);
  const card = $('cases-card');
  try {
    await Promise.all([loadCases(), loadCounts()]);
  } catch (err) {
    report(err);
  } finally {
    show($('cases-loading'), false);
    card.setAttribute('aria-busy', 'false');
  }
}

void start();
