/* global location, URLSearchParams, XMLHttpRequest, FormData, setTimeout, clearTimeout */
import { $, api, ApiError, clearAlert, count, h, session, show, time } from './console.js';
import { bytes, queryOf, report, SEVERITIES, startShell } from './shell.js';

/**
 * Scans (docs/console.md#scans): the upload form (drag and drop onto the drop zone or the file picker; an
 * XMLHttpRequest, because fetch reports no upload progress) and the list, polled while any scan
 * on the page is still queued or parsing. Names, assets and error messages are written as text.
 */
const params = new URLSearchParams(location.search);
const FORMATS = {
  nessus: 'Nessus',
  qualys: 'Qualys',
  openvas: 'OpenVAS',
  sarif: 'SARIF',
  cyclonedx: 'CycloneDX',
  cli: 'CLI findings',
};
const STATUS = { queued: 'Queued', parsing: 'Parsing', completed: 'Completed', failed: 'Failed' };
const POLL_MS = 1000;
let keyLabels = new Map();
let pollTimer = null;

function statusCell(s) {
  const label = h('span', { class: `scan-status scan-${s.status}` }, STATUS[s.status] || s.status);
  if (s.status === 'queued' || s.status === 'parsing') {
    const pct = Math.round((s.progress || 0) * 100);
    return h(
      'div',
      {},
      label,
      h('progress', { max: '100', value: String(pct), 'aria-label': `Parsed ${pct}%` }),
      h('span', { class: 'hint' }, ` ${pct}%`),
    );
  }
  if (s.status === 'failed' && s.error) {
    const e = s.error;
    const where =
      e.line !== null && e.line !== undefined
        ? `Line ${e.line}${e.column !== null && e.column !== undefined ? `, column ${e.column}` : ''}`
        : null;
    return h(
      'div',
      {},
      label,
      h('p', { class: 'scan-error' }, e.message),
      where ? h('p', { class: 'scan-error-where' }, where) : null,
    );
  }
  return h(
    'div',
    {},
    label,
    triageLine(s.triage),
    s.notes && s.notes.length
      ? h(
          'ul',
          { class: 'details' },
          s.notes.map((n) => h('li', {}, n)),
        )
      : null,
  );
}

const TRIAGE = { pending: 'waiting', running: 'running', completed: 'done', cancelled: 'cancelled' };

/** The upload's AI triage: how many of the cases it asked for were answered, failed or skipped for the quota. */
function triageLine(t) {
  if (!t) return null;
  const parts = [`${count(t.answered)} of ${count(t.requested - t.skippedForQuota)} answered`];
  if (t.failed) parts.push(`${count(t.failed)} failed`);
  if (t.skippedForQuota) parts.push(`${count(t.skippedForQuota)} skipped (no AI calls left this month)`);
  return h('p', { class: 'scan-triage' }, `AI triage ${TRIAGE[t.status] || t.status}: ${parts.join(', ')}`);
}

function severityCell(s) {
  const by = s.counts.bySeverity;
  return h(
    'ul',
    { class: 'sev-counts' },
    SEVERITIES.filter((sev) => by[sev] > 0).map((sev) =>
      h(
        'li',
        { class: `sev sev-${sev.toLowerCase()}` },
        `${sev[0]}${sev.slice(1).toLowerCase()} ${count(by[sev])}`,
      ),
    ),
    s.counts.findings === 0 ? h('li', { class: 'muted' }, 'No findings') : null,
  );
}

function uploader(keyId) {
  if (!keyId) return 'from the console';
  const label = keyLabels.get(keyId);
  return label ? `by key “${label}”` : 'by a deleted key';
}

function row(s) {
  const cell = (label, content, cls) => h('td', { 'data-label': label, class: cls }, content);
  return h(
    'tr',
    { dataset: { scanId: s.id, status: s.status } },
    h(
      'th',
      { scope: 'row', 'data-label': 'Scan' },
      h(
        'a',
        { href: `/cases?scan=${encodeURIComponent(s.id)}`, class: 'scan-name' },
        s.name || s.id.slice(0, 8),
      ),
      h('div', { class: 'hint' }, `${FORMATS[s.format] || s.format} · ${bytes(s.bytes)}`),
      s.asset && s.asset.name ? h('div', { class: 'hint asset' }, `Asset: ${s.asset.name}`) : null,
    ),
    cell(
      'Uploaded',
      h('div', {}, time(s.createdAt, '—', true), h('div', { class: 'hint' }, uploader(s.keyId))),
    ),
    cell('Status', statusCell(s)),
    cell('Findings', severityCell(s)),
    cell('New cases', count(s.counts.new), 'num'),
    cell('Duplicates', count(s.counts.duplicate), 'num'),
  );
}

function pager(nextCursor) {
  const base = queryOf(params, ['status', 'limit']);
  $('first-page').href = `/scans${base}`;
  show($('first-page'), params.has('cursor'));
  if (nextCursor) {
    const older = new URLSearchParams(base.slice(1));
    older.set('cursor', nextCursor);
    $('next-page').href = `/scans?${older}`;
  }
  show($('next-page'), Boolean(nextCursor));
}

async function loadScans() {
  const page = await api(`/scans${queryOf(params, ['status', 'limit', 'cursor'])}`);
  $('scans-body').replaceChildren(...page.data.map(row));
  show($('scans-empty'), page.data.length === 0);
  show($('scans-wrap'), page.data.length > 0);
  pager(page.nextCursor);
  const busy = page.data.some(
    (s) =>
      s.status === 'queued' ||
      s.status === 'parsing' ||
      (s.triage && (s.triage.status === 'pending' || s.triage.status === 'running')),
  );
  clearTimeout(pollTimer);
  if (busy) pollTimer = setTimeout(() => loadScans().catch(report), POLL_MS);
}

/** The upload: multipart with the file in `file`, the options in the query string. */
function upload(file, options, csrf, onProgress) {
  return new Promise((resolve, reject) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(options)) if (v) q.set(k, v);
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/api/console/scans${String(q) ? `?${q}` : ''}`);
    xhr.setRequestHeader('X-CSRF-Token', csrf);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.responseType = 'json';
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    });
    xhr.addEventListener('load', () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve(xhr.response);
      else reject(new ApiError(xhr.status, xhr.response));
    });
    xhr.addEventListener('error', () =>
      reject(new Error('The upload could not reach the service. Check your connection and try again.')),
    );
    const body = new FormData();
    body.append('file', file, file.name);
    xhr.send(body);
  });
}

function initUpload() {
  const form = $('upload-form');
  const input = $('upload-file');
  const zone = $('drop-zone');
  const bar = $('upload-progress');
  const status = $('upload-status');
  let chosen = null;

  const choose = (file) => {
    chosen = file || null;
    $('upload-file-name').textContent = chosen ? `${chosen.name} (${bytes(chosen.size)})` : '';
  };
  input.addEventListener('change', () => choose(input.files[0]));
  for (const type of ['dragenter', 'dragover']) {
    zone.addEventListener(type, (e) => {
      e.preventDefault();
      zone.classList.add('dragging');
    });
  }
  for (const type of ['dragleave', 'drop'])
    zone.addEventListener(type, () => zone.classList.remove('dragging'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    const file = e.dataTransfer && e.dataTransfer.files[0];
    if (file) choose(file);
  });

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearAlert($('page-error'));
    if (!chosen) {
      status.textContent = 'Choose a scan file first.';
      input.focus();
      return;
    }
    const triage = $('upload-triage');
    const options = {
      name: $('upload-name').value.trim(),
      asset: $('upload-asset').value.trim(),
      format: $('upload-format').value,
      triage: triage ? triage.value : '',
      key: $('upload-key') ? $('upload-key').value : '',
    };
    $('upload-submit').disabled = true;
    bar.value = 0;
    show(bar, true);
    status.textContent = `Uploading ${chosen.name}…`;
    try {
      const { csrfToken } = await session();
      const scan = await upload(chosen, options, csrfToken, (f) => {
        bar.value = Math.round(f * 100);
      });
      bar.value = 100;
      status.textContent = `Uploaded ${scan.name || chosen.name}; parsing has started.`;
      form.reset();
      choose(null);
      await loadScans();
    } catch (err) {
      status.textContent = 'The upload did not go through.';
      report(err);
    } finally {
      $('upload-submit').disabled = false;
    }
  });
}

/** The keys an upload can be made as: usable ones with scans:write; one with triage:write first. */
function fillKeys(keys) {
  const select = $('upload-key');
  if (!select) return;
  const usable = keys.filter(
    (k) => (k.status === 'active' || k.status === 'rotating') && k.scopes.includes('scans:write'),
  );
  for (const k of usable) {
    select.append(h('option', { value: k.id }, `${k.label} (${k.masked})`));
  }
  const triageKey = usable.find((k) => k.scopes.includes('triage:write'));
  $('upload-triage').addEventListener('change', () => {
    if ($('upload-triage').value !== 'none' && !select.value && triageKey) select.value = triageKey.id;
  });
}

async function start() {
  const me = await startShell();
  if (!me) return;
  initUpload();
  const card = $('scans-card');
  try {
    // Only an admin may list the keys (docs/console.md#members-and-roles): others upload without one.
    const admin = me.role === 'admin' || me.role === 'owner';
    const keys = admin ? await api('/keys') : { data: [] };
    keyLabels = new Map(keys.data.map((k) => [k.id, k.label]));
    fillKeys(keys.data);
    await loadScans();
  } catch (err) {
    report(err);
  } finally {
    show($('scans-loading'), false);
    card.setAttribute('aria-busy', 'false');
  }
}

void start();
