/* global document, location, URLSearchParams */
import {
  $,
  api,
  ApiError,
  clearAlert,
  h,
  handleSessionLoss,
  messageOf,
  session,
  show,
  showAlert,
  time,
} from './console.js';

/**
 * Settings > Audit log (docs/console.md#audit-log). The filters are a GET form, so the URL is the state:
 * this script copies the URL's filters into the form, asks `GET /api/console/audit-events` with
 * the same parameters, and draws one page, newest first, with a link to the older events (the
 * page's `nextCursor`). Labels and user agents are written as text, never as markup.
 */
const FILTERS = ['key', 'action', 'from', 'to'];
const PASSED = [...FILTERS, 'limit', 'cursor'];
const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** Each action's name, as the server wrote it in the action filter (one list: `templates/audit-page.ts`). */
const ACTIONS = Object.fromEntries(
  Array.from(document.querySelectorAll('#action option[value]'), (o) => [o.value, o.textContent]).filter(
    ([v]) => v,
  ),
);
const DETAIL_NAMES = {
  name: 'workflow',
  workflowId: 'workflow id',
  kind: 'target',
  changed: 'changed',
  from: 'from',
  to: 'to',
  reason: 'reason',
  successorId: 'successor',
  graceHours: 'grace (hours)',
  via: 'via',
  email: 'email',
  role: 'role',
  userId: 'member',
  invitationId: 'invitation',
};
const FIELD_NAMES = {
  key: 'Key',
  action: 'Action',
  from: 'From',
  to: 'To',
  limit: 'Page size',
  cursor: 'Page',
};

const pageError = $('page-error');
const params = new URLSearchParams(location.search);

/** A refused filter names the field in words ("From: must be a date …"), not a JSON path. */
function report(err) {
  if (handleSessionLoss(err)) return;
  const fields = (err instanceof ApiError ? err.errors : []).map((e) => {
    const name = String(e.path || '')
      .split('/')
      .pop();
    return `${FIELD_NAMES[name] || name}: ${e.message}.`;
  });
  const lead = fields.length > 0 ? 'The request has invalid fields.' : messageOf(err);
  showAlert(pageError, [lead, ...fields].join(' '));
}

/** The URL's filters into the form; the hidden page size is submitted only when the URL has one. */
function fillForm(keys) {
  const select = $('key');
  select.replaceChildren(
    h('option', { value: '' }, 'All keys'),
    ...keys.map((k) => h('option', { value: k.id }, `${k.label} (${k.masked})`)),
  );
  for (const name of FILTERS) {
    const value = params.get(name) || '';
    const input = $(name);
    if (input.type === 'date' && value && !DAY.test(value)) continue;
    input.value = value;
  }
  const limit = params.get('limit');
  if (limit) {
    $('limit').value = limit;
    $('limit').disabled = false;
  }
}

function keyCell(id, keysById) {
  if (!id) return h('span', { class: 'muted' }, '—');
  const k = keysById.get(id);
  if (!k) return h('code', {}, `${id.slice(0, 8)}…`);
  return h('div', {}, h('span', { class: 'key-name' }, k.label), h('code', { class: 'masked' }, k.masked));
}

function actorCell(actor, userId) {
  const you = actor === `user:${userId}`;
  return h('div', {}, you ? h('span', {}, 'You ') : null, h('code', { class: 'actor' }, actor));
}

function detailsCell(details, keysById) {
  // The database keeps no key order: known names first, in a reading order, then the rest.
  const order = Object.keys(DETAIL_NAMES);
  const rank = (name) => (order.includes(name) ? order.indexOf(name) : order.length);
  const entries = Object.entries(details || {}).sort(([a], [b]) => rank(a) - rank(b));
  if (entries.length === 0) return h('span', { class: 'muted' }, '—');
  return h(
    'ul',
    { class: 'details' },
    entries.map(([name, value]) => {
      const key = name === 'successorId' ? keysById.get(String(value)) : null;
      const shown = key
        ? key.masked
        : typeof value === 'object' && value !== null
          ? JSON.stringify(value)
          : String(value);
      return h('li', {}, h('span', { class: 'muted' }, `${DETAIL_NAMES[name] || name}: `), shown);
    }),
  );
}

function row(e, keysById, userId) {
  const cell = (label, content, cls) => h('td', { 'data-label': label, class: cls }, content);
  return h(
    'tr',
    { dataset: { eventId: e.id, action: e.action } },
    h('th', { scope: 'row', 'data-label': 'Time' }, time(e.at, '—', true)),
    cell('Action', h('span', { class: `audit-action audit-${e.action}` }, ACTIONS[e.action] || e.action)),
    cell('Actor', actorCell(e.actor, userId)),
    cell('IP address', e.ip ? h('code', {}, e.ip) : h('span', { class: 'muted' }, '—')),
    cell(
      'User agent',
      e.userAgent ? h('span', { class: 'ua' }, e.userAgent) : h('span', { class: 'muted' }, '—'),
    ),
    cell('Key', keyCell(e.keyId, keysById)),
    cell('Details', detailsCell(e.details, keysById)),
  );
}

/** Links to the newest page and to the next (older) one, keeping the filters. */
function pager(nextCursor) {
  const base = new URLSearchParams();
  for (const name of [...FILTERS, 'limit']) if (params.get(name)) base.set(name, params.get(name));
  const first = $('first-page');
  first.href = `/settings/audit-log${String(base) ? `?${base}` : ''}`;
  show(first, params.has('cursor'));
  const next = $('next-page');
  if (nextCursor) {
    const older = new URLSearchParams(base);
    older.set('cursor', nextCursor);
    next.href = `/settings/audit-log?${older}`;
  }
  show(next, Boolean(nextCursor));
}

async function start() {
  const card = $('audit-card');
  try {
    const me = await session();
    const [{ data: keys }, ws] = await Promise.all([api('/keys'), api('/workspace')]);
    $('nav-workspace').textContent = ws.name;
    fillForm(keys);
    const query = new URLSearchParams();
    for (const name of PASSED) if (params.get(name)) query.set(name, params.get(name));
    const page = await api(`/audit-events${String(query) ? `?${query}` : ''}`);
    const keysById = new Map(keys.map((k) => [k.id, k]));
    $('audit-body').replaceChildren(...page.data.map((e) => row(e, keysById, me.userId)));
    show($('audit-empty'), page.data.length === 0);
    show($('audit-wrap'), page.data.length > 0);
    pager(page.nextCursor);
    clearAlert(pageError);
  } catch (err) {
    report(err);
  } finally {
    show($('audit-loading'), false);
    card.setAttribute('aria-busy', 'false');
  }
}

/** Empty fields stay out of the URL, so a submitted form reads like a hand-written link. */
$('audit-filters').addEventListener('formdata', (event) => {
  for (const [name, value] of [...event.formData.entries()]) if (value === '') event.formData.delete(name);
});

$('logout').addEventListener('click', async () => {
  try {
    await api('/logout', { method: 'POST' });
    location.assign('/login?notice=signed-out');
  } catch (err) {
    report(err);
  }
});

void start();
