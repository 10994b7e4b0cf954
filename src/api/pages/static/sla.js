import { $, api, ApiError, busy, clearAlert, messageOf, show, showAlert } from './console.js';
import { report, startShell } from './shell.js';

/**
 * Settings > SLA (docs/cases.md#due-dates-and-sla): reads `GET /api/console/sla-policy` into the
 * form and saves it with `PUT`; an empty days field is null (no due date).
 */
const PRIORITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'];
const form = $('sla-form');
const notice = $('page-notice');

function fill(p) {
  for (const k of PRIORITIES) {
    $(`days-${k}`).value = p.days[k] ?? '';
    $(`exposed-${k}`).value = p.exposedDays[k] ?? '';
  }
  $('maxAcceptanceDays').value = String(p.maxAcceptanceDays);
}

/** A days field as the API takes it: null when empty, else the number typed (the API checks it). */
function daysOf(id) {
  const v = $(id).value.trim();
  return v === '' ? null : Number(v);
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  clearAlert($('page-error'));
  show(notice, false);
  const body = {
    days: Object.fromEntries(PRIORITIES.map((k) => [k, daysOf(`days-${k}`)])),
    exposedDays: Object.fromEntries(PRIORITIES.map((k) => [k, daysOf(`exposed-${k}`)])),
    maxAcceptanceDays: Number($('maxAcceptanceDays').value),
  };
  await busy(form, async () => {
    try {
      const saved = await api('/sla-policy', { method: 'PUT', body });
      fill(saved);
      notice.textContent = `SLA policy saved; ${saved.recomputed} due dates moved.`;
      show(notice, true);
    } catch (err) {
      if (err instanceof ApiError && err.errors.length > 0) {
        const detail = err.errors.map((e) => `${e.path.slice(1).replace('/', ' ')}: ${e.message}.`);
        showAlert($('page-error'), [messageOf(err), ...detail].join(' '));
        return;
      }
      report(err);
    }
  });
});

async function start() {
  if (!(await startShell())) return;
  try {
    fill(await api('/sla-policy'));
  } catch (err) {
    report(err);
  } finally {
    form.removeAttribute('aria-busy');
  }
}

void start();
