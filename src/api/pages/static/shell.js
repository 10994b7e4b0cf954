/* global location, URLSearchParams */
import { $, api, h, handleSessionLoss, messageOf, session, showAlert } from './console.js';

/**
 * What every signed-in data page (Dashboard, Scans, Cases, Case) shares: the session, the
 * workspace name in the top bar, Log out, and errors in words in the page's alert region.
 */
export const pageError = () => $('page-error');

export function report(err) {
  if (handleSessionLoss(err)) return;
  showAlert(pageError(), messageOf(err));
}

/** Loads the session and the workspace name; false when the page should stop (signed out). */
export async function startShell() {
  $('logout').addEventListener('click', async () => {
    try {
      await api('/logout', { method: 'POST' });
      location.assign('/login?notice=signed-out');
    } catch (err) {
      report(err);
    }
  });
  try {
    const [me, ws] = await Promise.all([session(), api('/workspace')]);
    $('nav-workspace').textContent = ws.name;
    return me;
  } catch (err) {
    report(err);
    return null;
  }
}

/** The URL's parameters named in `names`, as a query string with a leading `?` (or ''). */
export function queryOf(params, names) {
  const q = new URLSearchParams();
  for (const name of names) for (const v of params.getAll(name)) if (v !== '') q.append(name, v);
  return String(q) ? `?${q}` : '';
}

/** `1.5 MB` from a byte count. */
export function bytes(n) {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = Number(n) || 0;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i += 1;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

export const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'];

/**
 * Fills the select `#triage-key` with the workspace's keys that may bill a case triage (usable,
 * with `cases:write` and `triage:write`); with none, says so and disables `submit`.
 */
export async function fillCaseTriageKeys(submit) {
  const keys = (await api('/keys')).data.filter(
    (k) =>
      (k.status === 'active' || k.status === 'rotating') &&
      k.scopes.includes('triage:write') &&
      k.scopes.includes('cases:write'),
  );
  const select = $('triage-key');
  select.replaceChildren(...keys.map((k) => h('option', { value: k.id }, `${k.label} (${k.masked})`)));
  if (keys.length === 0) {
    select.append(h('option', { value: '' }, 'No key with cases:write and triage:write'));
    submit.disabled = true;
  }
  return select;
}
