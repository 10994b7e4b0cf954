import { $, api, count, formatDate, h, show, usd, usdDigits } from './console.js';

/**
 * The workspace card, the trial banner, the plan upgrade and the monthly statement
 * (docs/triage.md#billing): plan and trial state, usage against the limit, spend.
 */
const PLAN_NAMES = { free: 'Free', trial: 'Trial (service plan)', service: 'Service' };
const STATUS_NAMES = { active: 'Active', suspended: 'Suspended' };

export function renderWorkspace(ws) {
  $('ws-name').textContent = ws.name;
  $('nav-workspace').textContent = ws.name;
  $('ws-plan').replaceChildren(h('span', { class: `plan plan-${ws.plan}` }, PLAN_NAMES[ws.plan] || ws.plan));
  $('ws-status').replaceChildren(
    h('span', { class: `status status-${ws.status}` }, STATUS_NAMES[ws.status] || ws.status),
  );
  $('ws-active-keys').textContent = count(ws.activeKeys);
  // Keys in their rotation grace still work but are on their way out: counted apart.
  $('ws-rotating-keys').textContent = `${count(ws.rotatingKeys)} rotating`;
  show($('ws-rotating-keys'), ws.rotatingKeys > 0);
  $('ws-tokens').textContent = count(ws.tokenUsageTotal);
  $('ws-ai-calls').textContent = `${count(ws.aiCallsThisMonth)} of ${count(ws.aiCallLimit)}`;
  const meter = $('ws-ai-meter');
  meter.max = Math.max(1, ws.aiCallLimit);
  meter.value = Math.min(ws.aiCallsThisMonth, meter.max);
  meter.low = meter.max * 0.75;
  meter.high = meter.max * 0.9;
  meter.optimum = 0;
  $('ws-resets').textContent = `Resets ${formatDate(ws.monthResetsAt)}`;
  $('ws-spend').textContent = usd(ws.spendThisMonthUsd);

  const onTrial = ws.plan === 'trial' && ws.trialDaysLeft !== null;
  show($('trial-banner'), onTrial);
  if (onTrial) {
    $('trial-days').textContent = `${ws.trialDaysLeft} ${ws.trialDaysLeft === 1 ? 'day' : 'days'} left`;
    $('trial-ends').textContent = formatDate(ws.trialEndsAt);
  }
  show($('upgrade-btn'), ws.plan !== 'service');
  show($('downgrade-btn'), ws.plan !== 'free');
  show($('ws-loading'), false);
  show($('ws-stats'), true);
  $('workspace-card').setAttribute('aria-busy', 'false');
}

export async function loadWorkspace() {
  const ws = await api('/workspace');
  renderWorkspace(ws);
  return ws;
}

export async function upgrade() {
  return changePlan('service');
}

/** Service plan or trial back to Free (the server records it in the audit log). */
export async function downgrade() {
  return changePlan('free');
}

async function changePlan(plan) {
  const ws = await api('/plan', { method: 'POST', body: { plan } });
  renderWorkspace(ws);
  return ws;
}

const monthFormat = new Intl.DateTimeFormat('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' });
const currentMonth = () => new Date().toISOString().slice(0, 7);

export function initStatement(onChange) {
  const input = $('statement-month');
  input.value = currentMonth();
  input.max = currentMonth();
  input.addEventListener('change', () => {
    if (/^\d{4}-\d{2}$/.test(input.value)) onChange();
  });
}

/** Draws the statement for the chosen month; `labels` maps key ids to their labels. */
export async function loadStatement(labels) {
  const card = $('statement-card');
  card.setAttribute('aria-busy', 'true');
  show($('statement-loading'), true);
  try {
    const month = $('statement-month').value || currentMonth();
    const st = await api(`/statement?month=${encodeURIComponent(month)}`);
    const name = monthFormat.format(new Date(`${st.month}-01T00:00:00Z`));
    const num = (label, v) => h('td', { class: 'num', 'data-label': label }, v);
    const digits = usdDigits([...st.lines.map((l) => l.spendUsd), st.totals.spendUsd]);
    $('statement-body').replaceChildren(
      ...st.lines.map((l) =>
        h(
          'tr',
          { dataset: { keyId: l.keyId } },
          h('th', { scope: 'row', 'data-label': 'Key' }, labels.get(l.keyId) || `${l.keyId.slice(0, 8)}…`),
          h('td', { 'data-label': 'Tier' }, h('code', {}, l.tier)),
          num('AI calls', count(l.aiCalls)),
          num('Input tokens', count(l.inputTokens)),
          num('Output tokens', count(l.outputTokens)),
          num('Spend', usd(l.spendUsd, digits)),
        ),
      ),
    );
    const sum = (f) => st.lines.reduce((a, l) => a + f(l), 0);
    $('statement-foot').replaceChildren(
      h(
        'tr',
        {},
        h('th', { scope: 'row', colspan: 2, 'data-label': 'Total' }, `Total for ${name}`),
        num('AI calls', count(st.totals.aiCalls)),
        num('Input tokens', count(sum((l) => l.inputTokens))),
        num('Output tokens', count(sum((l) => l.outputTokens))),
        num('Spend', usd(st.totals.spendUsd, digits)),
      ),
    );
    $('statement-empty').textContent =
      `No AI calls in ${name}. Triage calls made with this workspace's keys are billed here.`;
    show($('statement-empty'), st.lines.length === 0);
    show($('statement-wrap'), st.lines.length > 0);
  } finally {
    show($('statement-loading'), false);
    card.setAttribute('aria-busy', 'false');
  }
}
