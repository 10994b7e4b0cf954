/* global FormData, fetch, setTimeout */
import {
  $,
  api,
  ApiError,
  busy,
  clearAlert,
  messageOf,
  session,
  show,
  showAlert,
  showFieldErrors,
} from './console.js';
import { report, startShell } from './shell.js';

/**
 * Settings > Data (docs/console.md#data-retention-archive-and-deletion): the scan file retention
 * (`GET/PUT /api/console/workspace/retention`), the archive link, and the workspace's deletion
 * (`POST /api/console/workspaces/:id/deletion`), whose status is polled until the removal finished.
 * The deletion ends this session too, so the status is read without one.
 */
const retention = $('retention-form');
const del = $('delete-form');
const notice = $('page-notice');
const status = $('delete-status');

function notify(text) {
  notice.textContent = text;
  show(notice, true);
}

function fill(r) {
  $('scanFileRetentionDays').value = r.scanFileRetentionDays ?? '';
}

function fail(form, err) {
  if (err instanceof ApiError && err.errors.length > 0) {
    const rest = showFieldErrors(form, err.errors);
    if (rest.length > 0) showAlert($('page-error'), [messageOf(err), ...rest].join(' '));
    return;
  }
  if (err instanceof ApiError && err.status !== 401) {
    showAlert($('page-error'), messageOf(err));
    return;
  }
  report(err);
}

retention.addEventListener('submit', async (event) => {
  event.preventDefault();
  clearAlert($('page-error'));
  show(notice, false);
  showFieldErrors(retention, []);
  const raw = String(new FormData(retention).get('scanFileRetentionDays') || '').trim();
  const body = { scanFileRetentionDays: raw === '' ? null : Number(raw) };
  await busy(retention, async () => {
    try {
      fill(await api('/workspace/retention', { method: 'PUT', body }));
      notify(body.scanFileRetentionDays === null ? 'Raw scan files are kept.' : 'Retention saved.');
    } catch (err) {
      fail(retention, err);
    }
  });
});

async function poll(url) {
  for (;;) {
    const res = await fetch(url, { headers: { Accept: 'application/json' }, cache: 'no-store' });
    const s = res.ok ? await res.json() : null;
    if (s && s.status === 'finished') {
      status.textContent = `The workspace and its data were removed at ${new Date(s.finishedAt).toLocaleString()}.`;
      return;
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}

del.addEventListener('submit', async (event) => {
  event.preventDefault();
  clearAlert($('page-error'));
  show(notice, false);
  showFieldErrors(del, []);
  const confirmName = String(new FormData(del).get('confirmName') || '');
  await busy(del, async () => {
    try {
      const { workspaceId } = await session();
      const d = await api(`/workspaces/${workspaceId}/deletion`, { method: 'POST', body: { confirmName } });
      show(del, false);
      status.textContent =
        'Deletion requested: every key is revoked and everyone is signed out. Removing its data…';
      show(status, true);
      void poll(d.statusUrl);
    } catch (err) {
      fail(del, err);
    }
  });
});

async function start() {
  if (!(await startShell())) return;
  try {
    fill(await api('/workspace/retention'));
  } catch (err) {
    report(err);
  } finally {
    retention.removeAttribute('aria-busy');
  }
}

void start();
