/* global FormData, location */
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
} from './console.js';
import { confirmWith } from './settings-dialog.js';

/**
 * The keys table and its actions (DECISIONS §3, §4): create (then the new key's reveal
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
          'aria-label': `Revoke key ${k.label}`,
        },
        'Revoke',
      ),
    );
  }
  return h('div', { class: 'row-actions' }, buttons);
}

function row(k) {
  const cell = (label, content, cls) => h('td', { 'data-label': label, class: cls }, content);
  return h(
    'tr',
    { dataset: { keyId: k.id, status: k.status } },
    h(
      'th',
      { scope: 'row', 'data-label': 'Key' },
      h('div', {}, h('span', { class: 'key-name' }, k.label), h('code', { class: 'masked' }, k.masked)),
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
    cell('Spend', usd(k.usage.spendUsd), 'num'),
    cell('Actions', actionsCell(k), 'actions'),
  );
}

/** Loads and draws the table; returns the keys (the statement uses their labels). */
export async function loadKeys() {
  const card = $('keys-card');
  card.setAttribute('aria-busy', 'true');
  try {
    const { data } = await api('/keys');
    $('keys-body').replaceChildren(...data.map(row));
    show($('keys-empty'), data.length === 0);
    show($('keys-wrap'), data.length > 0);
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
