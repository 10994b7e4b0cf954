/* global FormData, location, history */
import {
  $,
  api,
  ApiError,
  busy,
  clearAlert,
  count,
  h,
  messageOf,
  show,
  showAlert,
  showFieldErrors,
  time,
  usd,
  usdDigits,
} from './console.js';
import { confirmWith } from './settings-dialog.js';

/**
 * The keys table and its actions (docs/console.md#sign-up-and-api-keys, docs/api.md#keys): create (then the new key's reveal
 * page), rotate with a grace period (then the successor's reveal page), revoke after a
 * confirmation. Only masked secrets are ever written here.
 */
const HEALTH = {
  healthy: 'Rotation healthy',
  due: 'Rotation due',
  overdue: 'Rotation overdue',
};

function statusCell(k) {
  if (k.status === 'active') {
    return [
      h('span', { class: 'status status-active' }, 'Active'),
      h(
        'span',
        {
          class: `health health-${k.rotationHealth}`,
          title: 'Key age against the workspace rotation policy',
        },
        HEALTH[k.rotationHealth] || k.rotationHealth,
      ),
    ];
  }
  if (k.status === 'rotating') {
    return [
      h('span', { class: 'status status-rotating' }, 'Rotating'),
      h('span', { class: 'hint' }, 'works until ', time(k.graceEndsAt, '—', true)),
    ];
  }
  if (k.status === 'revoked')
    return [
      h('span', { class: 'status status-revoked' }, 'Revoked'),
      h('span', { class: 'hint' }, time(k.revokedAt)),
    ];
  return [h('span', { class: 'status status-expired' }, k.status === 'expired' ? 'Expired' : k.status)];
}

function actionsCell(k) {
  const buttons = [];
  if (k.status === 'active') {
    buttons.push(
      h(
        'button',
        {
          type: 'button',
          class: 'btn btn-small',
          'data-action': 'rotate',
          'data-needs-role': 'admin',
          'aria-label': `Rotate key ${k.label}`,
        },
        'Rotate',
      ),
    );
  }
  if (k.status === 'active' || k.status === 'rotating') {
    buttons.push(
      h(
        'button',
        {
          type: 'button',
          class: 'btn btn-small btn-danger-quiet',
          'data-action': 'revoke',
          'data-needs-role': 'admin',
          'aria-label': `Revoke key ${k.label}`,
        },
        'Revoke',
      ),
    );
  }
  return h('div', { class: 'row-actions' }, buttons);
}

/**
 * After a rotation both keys carry the same label: the old one says which key succeeded it and
 * the successor which key it replaced, each naming the other by its masked secret and linking
 * to its row.
 */
function lineage(k, table) {
  const links = [];
  const successor = k.successorId && table.byId.get(k.successorId);
  if (successor) {
    links.push(h('span', { class: 'lineage lineage-to' }, 'rotated to ', keyLink(successor)));
  }
  const predecessor = table.predecessorOf.get(k.id);
  if (predecessor) {
    links.push(h('span', { class: 'lineage lineage-from' }, 'successor of ', keyLink(predecessor)));
  }
  return links;
}

function keyLink(k) {
  return h('a', { href: `#key-${k.id}` }, h('code', {}, k.masked));
}

function row(k, table) {
  const cell = (label, content, cls) => h('td', { 'data-label': label, class: cls }, content);
  return h(
    'tr',
    { id: `key-${k.id}`, dataset: { keyId: k.id, status: k.status } },
    h(
      'th',
      { scope: 'row', 'data-label': 'Key' },
      h(
        'div',
        {},
        h('span', { class: 'key-name' }, k.label),
        h('code', { class: 'masked' }, k.masked),
        lineage(k, table),
      ),
    ),
    cell(
      'Scopes',
      h(
        'ul',
        { class: 'scopes' },
        k.scopes.map((s) => h('li', {}, h('code', {}, s))),
      ),
    ),
    cell('Created', time(k.createdAt)),
    cell('Expires', time(k.expiresAt, 'Never')),
    cell('Last used', time(k.lastUsedAt, 'Never', true)),
    cell('Status', h('div', { class: 'status-cell' }, statusCell(k))),
    cell('Requests', count(k.usage.requests), 'num'),
    cell('Tokens', count(k.usage.tokens), 'num'),
    cell('Spend', usd(k.usage.spendUsd, table.digits), 'num'),
    cell('Actions', actionsCell(k), 'actions'),
  );
}

/** Loads and draws the table; returns the keys (the statement uses their labels). */
export async function loadKeys() {
  const card = $('keys-card');
  card.setAttribute('aria-busy', 'true');
  try {
    const { data } = await api('/keys');
    const table = {
      digits: usdDigits(data.map((k) => k.usage.spendUsd)),
      byId: new Map(data.map((k) => [k.id, k])),
      predecessorOf: new Map(data.filter((k) => k.successorId).map((k) => [k.successorId, k])),
    };
    $('keys-body').replaceChildren(...data.map((k) => row(k, table)));
    show($('keys-empty'), data.length === 0);
    show($('keys-wrap'), data.length > 0);
    applyHideEnded();
    return data;
  } finally {
    show($('keys-loading'), false);
    card.setAttribute('aria-busy', 'false');
  }
}

/** Wires rotate and revoke on the table; `after` reloads what a change affects. */
export function initKeyActions(ui) {
  $('keys-body').addEventListener('click', async (event) => {
    const button = event.target.closest('button[data-action]');
    if (!button) return;
    const tr = button.closest('tr');
    const id = tr.dataset.keyId;
    const label = tr.querySelector('.key-name').textContent;
    try {
      if (button.dataset.action === 'rotate') {
        if (!(await confirmWith($('rotate-dialog'), label))) return;
        const graceHours = Number($('graceHours').value);
        button.disabled = true;
        const { successor } = await api(`/keys/${encodeURIComponent(id)}/rotate`, {
          method: 'POST',
          body: { graceHours },
        });
        location.assign(successor.revealUrl);
      } else if (button.dataset.action === 'revoke') {
        if (!(await confirmWith($('revoke-dialog'), label))) return;
        button.disabled = true;
        await api(`/keys/${encodeURIComponent(id)}/revoke`, { method: 'POST', body: {} });
        ui.notify(`Key “${label}” is revoked. Requests with it are refused from now on.`);
        await ui.after();
      }
    } catch (err) {
      button.disabled = false;
      ui.report(err);
    }
  });
}

/** The create form: label, scopes, expiry (days or a date), then the new key's reveal page. */
export function initCreateForm(ui) {
  const form = $('create-form');
  const alertBox = $('create-error');
  const select = $('expiresIn');
  const dateField = $('expiry-date-field');
  const syncDate = () => {
    const onDate = select.value === 'date';
    show(dateField, onDate);
    $('expiryDate').required = onDate;
  };
  select.addEventListener('change', syncDate);
  syncDate();
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  $('expiryDate').min = tomorrow;

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearAlert(alertBox);
    showFieldErrors(form, []);
    const data = new FormData(form);
    const scopes = data.getAll('scopes').map(String);
    if (scopes.length === 0) {
      showFieldErrors(form, [{ path: '/scopes', message: 'needs at least one scope' }]);
      showAlert(alertBox, 'Choose at least one scope.');
      return;
    }
    const choice = String(data.get('expiresIn'));
    const expiresIn =
      choice === 'never' ? 'never' : choice === 'date' ? String(data.get('expiryDate')) : Number(choice);
    await busy(form, async () => {
      try {
        const created = await api('/keys', {
          method: 'POST',
          body: { label: String(data.get('label')).trim(), scopes, expiresIn },
        });
        location.assign(created.revealUrl);
      } catch (err) {
        if (ui.sessionLost(err)) return;
        const rest = err instanceof ApiError ? showFieldErrors(form, err.errors.map(toFormPath)) : [];
        showAlert(alertBox, [messageOf(err), ...rest].join(' '));
      }
    });
  });
}

/** A date that fails lands on the date input, not the select. */
function toFormPath(e) {
  return e.path === '/expiresIn' && $('expiresIn').value === 'date' ? { ...e, path: '/expiryDate' } : e;
}

/** Keys that no longer authenticate and have no action left. */
const ENDED = new Set(['revoked', 'expired']);
const HIDE_PARAM = 'hide';
const HIDE_VALUE = 'ended';

/** Hides the revoked and expired rows when the box is ticked, and says how many are hidden. */
function applyHideEnded() {
  const hide = $('hide-ended').checked;
  let hidden = 0;
  for (const tr of $('keys-body').rows) {
    const ended = ENDED.has(tr.dataset.status);
    tr.hidden = hide && ended;
    if (tr.hidden) hidden += 1;
  }
  $('keys-hidden-note').textContent =
    hidden > 0 ? `${count(hidden)} revoked or expired ${hidden === 1 ? 'key is' : 'keys are'} hidden.` : '';
}

/**
 * "Hide revoked and expired" (docs/console.md#sign-up-and-api-keys): shown by default, as a person expects to find
 * every key they made; the choice is kept in the URL (`?hide=ended`) so a reload or a bookmark
 * keeps it. A native checkbox, so Space toggles it from the keyboard.
 */
export function initHideEnded() {
  const box = $('hide-ended');
  box.checked = new URL(location.href).searchParams.get(HIDE_PARAM) === HIDE_VALUE;
  box.addEventListener('change', () => {
    const url = new URL(location.href);
    if (box.checked) url.searchParams.set(HIDE_PARAM, HIDE_VALUE);
    else url.searchParams.delete(HIDE_PARAM);
    history.replaceState(null, '', url);
    applyHideEnded();
  });
}
