/* global document, location */
import { $, api, clearAlert, handleSessionLoss, messageOf, session, show, showAlert } from './console.js';
import { initCreateForm, initHideEnded, initKeyActions, loadKeys } from './settings-keys.js';
import { downgrade, initStatement, loadStatement, loadWorkspace, upgrade } from './settings-billing.js';
import { confirmWith } from './settings-dialog.js';

/** Settings > API keys: loads the session, then the workspace, keys and statement. */
const pageError = $('page-error');
const pageNotice = $('page-notice');
let labels = new Map();

const ui = {
  sessionLost: handleSessionLoss,
  report(err) {
    if (handleSessionLoss(err)) return;
    showAlert(pageError, messageOf(err));
  },
  notify(text) {
    clearAlert(pageError);
    pageNotice.textContent = text;
    show(pageNotice, true);
  },
  async after() {
    await Promise.all([loadWorkspace(), refreshKeys()]);
    await loadStatement(labels);
  },
};

async function refreshKeys() {
  const keys = await loadKeys();
  labels = new Map(keys.map((k) => [k.id, k.label]));
}

async function start() {
  let me;
  try {
    me = await session();
  } catch (err) {
    ui.report(err);
    return;
  }
  // Keys are an admin's to read and manage (docs/console.md#members-and-roles): below, the card is hidden.
  const admin = me.role === 'admin' || me.role === 'owner';
  const results = await Promise.allSettled([loadWorkspace(), admin ? refreshKeys() : Promise.resolve()]);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) ui.report(failed.reason);
  try {
    await loadStatement(labels);
  } catch (err) {
    ui.report(err);
  }
}

for (const button of document.querySelectorAll('[data-action="upgrade"]')) {
  button.addEventListener('click', async () => {
    if (!(await confirmWith($('upgrade-dialog')))) return;
    try {
      await upgrade();
      ui.notify('Your workspace is on the service plan now.');
    } catch (err) {
      ui.report(err);
    }
  });
}

$('downgrade-btn').addEventListener('click', async () => {
  if (!(await confirmWith($('downgrade-dialog')))) return;
  try {
    await downgrade();
    ui.notify('Your workspace is on the Free plan now. The change is in the audit log.');
  } catch (err) {
    ui.report(err);
  }
});

$('logout').addEventListener('click', async () => {
  try {
    await api('/logout', { method: 'POST' });
    location.assign('/login?notice=signed-out');
  } catch (err) {
    ui.report(err);
  }
});

initHideEnded();
initKeyActions(ui);
initCreateForm(ui);
initStatement(() => loadStatement(labels).catch(ui.report));
void start();
