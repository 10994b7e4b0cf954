/* global setTimeout, clearTimeout */
import { $, api, ApiError, clearAlert, h, show, showFieldErrors, time } from './console.js';
import { report, startShell } from './shell.js';

/**
 * Settings > Workflows (docs/console.md#workflows): lists the workspace's workflows, creates or edits one with a
 * live preview of its mapped fields for a sample case (`POST /workflows/preview`, debounced),
 * sends a test delivery and shows a workflow's recent deliveries with their errors. Names,
 * targets, errors and previews are written as text.
 */
const form = $('wf-form');
let editing = null;
let previewTimer = null;

function notify(text) {
  clearAlert($('page-error'));
  $('page-notice').textContent = text;
  show($('page-notice'), true);
}

const checked = (name) => [...form.querySelectorAll(`input[name="${name}"]:checked`)].map((i) => i.value);

function ruleOf() {
  const rule = {};
  for (const name of ['priority', 'severity', 'status']) {
    const values = checked(name);
    if (values.length) rule[name] = values;
  }
  if ($('rule-kev').value === 'true') rule.kev = true;
  return rule;
}

function fieldsOf() {
  const fields = {};
  const summary = $('summary').value.trim();
  if (summary) fields.summary = summary;
  const labels = $('labels')
    .value.split(',')
    .map((l) => l.trim())
    .filter(Boolean);
  if (labels.length) fields.labels = labels;
  return fields;
}

function targetOf(kind) {
  const v = (id) => $(id).value.trim();
  if (kind === 'jira')
    return {
      kind,
      baseUrl: v('baseUrl'),
      email: v('email'),
      apiToken: $('apiToken').value,
      projectKey: v('projectKey'),
    };
  if (kind === 'github') return { kind, owner: v('owner'), repo: v('repo'), token: $('token').value };
  if (kind === 'slack') return { kind, url: $('slackUrl').value.trim() };
  return { kind, url: v('url') };
}

function showKind() {
  const kind = $('kind').value;
  for (const fs of form.querySelectorAll('fieldset.target')) show(fs, fs.dataset.kind === kind);
}

function ruleText(rule) {
  const parts = [];
  if (rule.priority) parts.push(`priority ${rule.priority.join(', ')}`);
  if (rule.severity) parts.push(`severity ${rule.severity.join(', ')}`);
  if (rule.status) parts.push(`status ${rule.status.join(', ')}`);
  if (rule.kev) parts.push('in KEV');
  return parts.length ? parts.join(' · ') : 'every case';
}

function targetText(w) {
  const t = w.target;
  if (w.kind === 'jira') return `Jira ${t.projectKey} at ${t.baseUrl}`;
  if (w.kind === 'github') return `GitHub ${t.owner}/${t.repo}`;
  if (w.kind === 'slack') return `Slack webhook ${t.credential}`;
  return `Webhook ${t.url}`;
}

async function schedulePreview() {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(async () => {
    try {
      const p = await api('/workflows/preview', {
        method: 'POST',
        body: { kind: $('kind').value, fields: fieldsOf() },
      });
      $('preview-case').textContent = `For the newest case: ${p.case.title}`;
      $('preview-summary').textContent = p.summary;
      $('preview-labels').textContent = p.labels.length ? p.labels.join(', ') : '—';
      show($('preview-error'), false);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        $('preview-case').textContent = 'No case yet to preview with: upload a scan first.';
        return;
      }
      $('preview-error').textContent =
        err instanceof ApiError && err.errors.length
          ? err.errors.map((e) => e.message).join('; ')
          : err.message;
      show($('preview-error'), true);
    }
  }, 250);
}

async function showDeliveries(w) {
  const page = await api(`/workflows/${w.id}/deliveries?limit=20`);
  $('deliveries-title').textContent = `Recent deliveries of ${w.name}`;
  $('deliveries-list').replaceChildren(
    ...page.data.map((d) =>
      h(
        'li',
        { dataset: { status: d.status } },
        time(d.createdAt, '—', true),
        ` ${d.event} · ${d.status} · ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`,
        d.responseCode ? ` · HTTP ${d.responseCode}` : '',
        d.error ? h('p', { class: 'scan-error' }, d.error) : null,
      ),
    ),
  );
  if (page.data.length === 0) $('deliveries-list').append(h('li', { class: 'empty' }, 'No deliveries yet.'));
  show($('deliveries'), true);
}

/** A row's button; `needs` the least role it works for (hidden below it, console.js showForRole). */
function actionButton(label, onClick, needs = 'admin') {
  const b = h('button', { type: 'button', class: 'btn btn-small', 'data-needs-role': needs }, label);
  b.addEventListener('click', () => onClick().catch(report));
  return b;
}

function row(w) {
  return h(
    'tr',
    { dataset: { workflowId: w.id } },
    h(
      'th',
      { scope: 'row', 'data-label': 'Workflow' },
      h('span', { class: 'wf-name' }, w.name),
      w.enabled ? null : h('span', { class: 'muted' }, ' (disabled)'),
      h('div', { class: 'hint wf-target' }, targetText(w)),
    ),
    h('td', { 'data-label': 'Rule' }, ruleText(w.rule || {})),
    h(
      'td',
      { 'data-label': 'Last delivery' },
      w.lastDeliveryAt
        ? h('div', {}, time(w.lastDeliveryAt, '—', true), ` ${w.lastDeliveryStatus || ''}`)
        : h('span', { class: 'muted' }, 'None yet'),
      w.lastError ? h('p', { class: 'scan-error wf-error' }, w.lastError) : null,
    ),
    h(
      'td',
      { 'data-label': 'Actions', class: 'actions' },
      h(
        'div',
        { class: 'row-actions' },
        actionButton('Test delivery', async () => {
          const r = await api(`/workflows/${w.id}/test`, { method: 'POST' });
          notify(r.delivered ? `Test delivered (HTTP ${r.responseCode}).` : `Test failed: ${r.error}`);
          await load();
          await showDeliveries(w);
        }),
        actionButton('Deliveries', () => showDeliveries(w), null),
        actionButton('Edit', async () => edit(w)),
        actionButton(w.enabled ? 'Disable' : 'Enable', async () => {
          await api(`/workflows/${w.id}`, { method: 'PATCH', body: { enabled: !w.enabled } });
          await load();
        }),
        actionButton('Delete', async () => {
          await api(`/workflows/${w.id}`, { method: 'DELETE' });
          notify(`Deleted ${w.name}.`);
          await load();
        }),
      ),
    ),
  );
}

function edit(w) {
  editing = w;
  $('form-title').textContent = `Edit ${w.name}`;
  $('wf-submit').textContent = 'Save workflow';
  show($('wf-cancel'), true);
  $('name').value = w.name;
  $('kind').value = w.kind;
  $('kind').disabled = true;
  showKind();
  for (const fs of form.querySelectorAll('fieldset.target')) fs.disabled = true;
  for (const name of ['priority', 'severity', 'status']) {
    for (const box of form.querySelectorAll(`input[name="${name}"]`))
      box.checked = (w.rule[name] || []).includes(box.value);
  }
  $('rule-kev').value = w.rule.kev ? 'true' : '';
  $('summary').value = w.fields.summary || '';
  $('labels').value = (w.fields.labels || []).join(', ');
  $('name').focus();
  void schedulePreview();
}

function stopEditing() {
  editing = null;
  form.reset();
  $('form-title').textContent = 'New workflow';
  $('wf-submit').textContent = 'Create workflow';
  show($('wf-cancel'), false);
  $('kind').disabled = false;
  for (const fs of form.querySelectorAll('fieldset.target')) fs.disabled = false;
  showKind();
  void schedulePreview();
}

async function load() {
  const list = await api('/workflows');
  $('wf-body').replaceChildren(...list.data.map(row));
  show($('wf-empty'), list.data.length === 0);
  show($('wf-wrap'), list.data.length > 0);
}

form.addEventListener('input', () => void schedulePreview());
$('kind').addEventListener('change', () => {
  showKind();
  void schedulePreview();
});
$('wf-cancel').addEventListener('click', stopEditing);
form.addEventListener('submit', async (e) => {
  e.preventDefault();
  $('wf-submit').disabled = true;
  try {
    const common = { name: $('name').value.trim(), rule: ruleOf(), fields: fieldsOf() };
    if (editing) {
      await api(`/workflows/${editing.id}`, { method: 'PATCH', body: common });
      notify(`Saved ${common.name}.`);
    } else {
      const created = await api('/workflows', {
        method: 'POST',
        body: { ...common, target: targetOf($('kind').value) },
      });
      notify(
        created.secret
          ? `Created ${created.name}. Its signing secret, shown only now: ${created.secret}`
          : `Created ${created.name}.`,
      );
    }
    stopEditing();
    await load();
  } catch (err) {
    if (err instanceof ApiError && err.errors.length) {
      const rest = showFieldErrors(
        form,
        err.errors.map((x) => ({ ...x, path: String(x.path).replace(/^\/target/, '') })),
      );
      if (rest.length) report(new Error(rest.join('; ')));
    } else report(err);
  } finally {
    $('wf-submit').disabled = false;
  }
});

async function start() {
  const me = await startShell();
  if (!me) return;
  showKind();
  try {
    await load();
    void schedulePreview();
  } catch (err) {
    report(err);
  } finally {
    show($('wf-loading'), false);
    $('workflows-card').setAttribute('aria-busy', 'false');
  }
}

void start();
