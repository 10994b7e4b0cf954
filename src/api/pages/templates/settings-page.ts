import type { Config } from '../../../lib/config.js';
import { SCOPES, FIRST_KEY_SCOPES, type Scope } from '../../../domain/keys/scopes.js';
import { DEFAULT_GRACE_HOURS, EXPIRY_DAYS, MAX_GRACE_HOURS } from '../../../domain/keys/key-lifecycle.js';
import { html, type SafeHtml } from '../html.js';
import { dataTable, field } from './layout.js';
import { settingsLayout } from './settings-nav.js';

/** What each scope unlocks, in the words of docs/api.md#keys. */
const SCOPE_HELP: Record<Scope, string> = {
  'triage:write': 'Single and batch triage',
  'scans:write': 'Upload scans',
  'scans:read': 'Read scans, findings, cases, evidence and exports',
  'cases:write': 'Change case status and request case triage (with triage:write)',
  'usage:read': 'Read usage and /api/v1/keys/me',
  'keys:write': 'Manage keys from the API',
  'workflows:write': 'Manage mapped workflows (Jira, GitHub Issues, webhooks)',
};

const DEFAULT_EXPIRY_DAYS = 90;

function scopeChoices(): SafeHtml {
  return html`${SCOPES.map(
    (s) =>
      html`<label class="choice choice-compact">
        <input
          type="checkbox"
          name="scopes"
          value="${s}"
          ${FIRST_KEY_SCOPES.includes(s) ? html` checked` : ''}
        />
        <span><code>${s}</code> <span class="muted">${SCOPE_HELP[s]}</span></span>
      </label>`,
  )}`;
}

function expiryOptions(): SafeHtml {
  return html`<option value="never">Never</option>
    ${EXPIRY_DAYS.map((d) => html`<option value="${d}" ${d === DEFAULT_EXPIRY_DAYS ? html` selected` : ''}>In ${d} days</option>`)}
    <option value="date">On a date&hellip;</option>`;
}

/**
 * A confirmation dialog (`<name>-dialog`): its title, what confirming does, any fields it asks for,
 * Cancel (which never validates those fields) and the confirm button, red where it cannot be undone.
 * `settings.js` opens it and reads which button closed it.
 */
function confirmDialog(o: {
  name: string;
  title: SafeHtml;
  text: SafeHtml;
  fields?: SafeHtml;
  confirm: string;
  danger?: boolean;
}): SafeHtml {
  return html`<dialog
    id="${o.name}-dialog"
    aria-labelledby="${o.name}-title"
    aria-describedby="${o.name}-desc"
  >
    <form method="dialog" class="stack">
      <h2 id="${o.name}-title">${o.title}</h2>
      <p id="${o.name}-desc">${o.text}</p>
      ${o.fields ?? ''}
      <div class="dialog-actions">
        <button type="submit" value="cancel" class="btn" formnovalidate>Cancel</button>
        <button type="submit" value="confirm" class="btn ${o.danger ? 'btn-danger' : 'btn-primary'}">
          ${o.confirm}
        </button>
      </div>
    </form>
  </dialog>`;
}

/**
 * Settings > API keys (docs/console.md#sign-up-and-api-keys): the workspace card, the keys table, the create form,
 * the monthly statement, and the confirmation dialogs. The server renders the frame and
 * the choices that come from configuration; `settings.js` fills in the data, so every
 * section starts in a visible loading state.
 */
export function settingsPage(config: Pick<Config, 'plans'>): SafeHtml {
  const service = config.plans.service;
  return settingsLayout({
    current: '/settings/api-keys',
    script: 'settings.js',
    notices: true,
    main: html`<div id="trial-banner" class="banner" hidden>
        <p>
          <strong id="trial-days"></strong> on your trial of the service plan (ends
          <span id="trial-ends"></span>). Afterwards the workspace falls back to Free by itself.
        </p>
        <button type="button" class="btn btn-primary" data-action="upgrade" data-needs-role="owner">
          Upgrade to service plan
        </button>
      </div>

      <section class="card" id="workspace-card" aria-labelledby="ws-title" aria-busy="true">
        <div class="card-head">
          <h2 id="ws-title">Workspace</h2>
          <div class="head-actions">
            <button
              type="button"
              id="upgrade-btn"
              class="btn"
              data-action="upgrade"
              data-needs-role="owner"
              hidden
            >
              Upgrade to service plan
            </button>
            <button type="button" id="downgrade-btn" class="btn btn-quiet" data-needs-role="owner" hidden>
              Go back to Free
            </button>
          </div>
        </div>
        <p id="ws-loading" class="loading" role="status">Loading workspace&hellip;</p>
        <dl id="ws-stats" class="stats" hidden>
          <div>
            <dt>Name</dt>
            <dd id="ws-name"></dd>
          </div>
          <div>
            <dt>Plan</dt>
            <dd id="ws-plan"></dd>
          </div>
          <div>
            <dt>Status</dt>
            <dd id="ws-status"></dd>
          </div>
          <div>
            <dt>Active keys</dt>
            <dd>
              <span id="ws-active-keys"></span>
              <span id="ws-rotating-keys" class="hint" hidden></span>
            </dd>
          </div>
          <div>
            <dt>Token usage (total)</dt>
            <dd id="ws-tokens"></dd>
          </div>
          <div>
            <dt>AI calls this month</dt>
            <dd>
              <span id="ws-ai-calls"></span>
              <meter id="ws-ai-meter" min="0" value="0" aria-labelledby="ws-ai-calls"></meter>
              <span id="ws-resets" class="hint"></span>
            </dd>
          </div>
          <div>
            <dt>Spend this month</dt>
            <dd id="ws-spend"></dd>
          </div>
        </dl>
      </section>

      <section
        class="card"
        id="keys-card"
        aria-labelledby="keys-title"
        aria-busy="true"
        data-needs-role="admin"
      >
        <div class="card-head">
          <h2 id="keys-title">Keys</h2>
          <div class="head-actions">
            <label class="choice choice-compact" for="hide-ended">
              <input type="checkbox" id="hide-ended" aria-controls="keys-table" />
              <span>Hide revoked and expired</span>
            </label>
            <a class="btn btn-primary" href="#create-key">Create key</a>
          </div>
        </div>
        <p id="keys-hidden-note" class="hint" role="status"></p>
        ${dataTable({
          name: 'keys',
          loading: 'Loading keys',
          empty: 'No keys yet. Create one below to call the API.',
          caption: 'API keys of this workspace, newest first',
          columns: html` <th scope="col">Key <span class="th-sub">label and masked secret</span></th>
            <th scope="col">Scopes</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used <span class="th-sub">UTC</span></th>
            <th scope="col">Status</th>
            <th scope="col" class="num">Requests</th>
            <th scope="col" class="num">Tokens</th>
            <th scope="col" class="num">Spend</th>
            <th scope="col"><span class="sr-only">Actions</span></th>`,
        })}
      </section>

      <section
        class="card"
        id="create-key"
        aria-labelledby="create-title"
        tabindex="-1"
        data-needs-role="admin"
      >
        <h2 id="create-title">Create a key</h2>
        <p class="hint">The new key is shown once, on its own page, right after you create it.</p>
        <div id="create-error" class="alert alert-error" role="alert" tabindex="-1" hidden></div>
        <form id="create-form" class="stack form-grid" method="post">
          ${field({ id: 'label', label: 'Label', hint: 'What or who uses it, e.g. “CI pipeline”.', attrs: html`required maxlength="100"` })}
          <fieldset class="field" aria-describedby="scopes-error">
            <legend>Scopes</legend>
            ${scopeChoices()}
            <p class="field-error" id="scopes-error" hidden></p>
          </fieldset>
          <div class="field">
            <label for="expiresIn">Expires</label>
            <select id="expiresIn" name="expiresIn" aria-describedby="expiresIn-error">
              ${expiryOptions()}
            </select>
            <p class="field-error" id="expiresIn-error" hidden></p>
          </div>
          <div class="field" id="expiry-date-field" hidden>
            <label for="expiryDate">Expiry date</label>
            <input id="expiryDate" name="expiryDate" type="date" aria-describedby="expiryDate-error" />
            <p class="field-error" id="expiryDate-error" hidden></p>
          </div>
          <div><button type="submit" class="btn btn-primary">Create key</button></div>
        </form>
      </section>

      <section class="card" id="statement-card" aria-labelledby="statement-title" aria-busy="true">
        <div class="card-head">
          <h2 id="statement-title">Monthly statement</h2>
          <div class="field-inline">
            <label for="statement-month">Month</label>
            <input id="statement-month" type="month" />
          </div>
        </div>
        <p class="hint">
          AI calls, tokens and spend per key and model tier. Months are calendar months in UTC.
        </p>
        ${dataTable({
          name: 'statement',
          loading: 'Loading statement',
          caption: 'Statement lines per key and model tier',
          columns: html` <th scope="col">Key</th>
            <th scope="col">Tier</th>
            <th scope="col" class="num">AI calls</th>
            <th scope="col" class="num">Input tokens</th>
            <th scope="col" class="num">Output tokens</th>
            <th scope="col" class="num">Spend</th>`,
          foot: true,
        })}
      </section>

      ${confirmDialog({
        name: 'rotate',
        title: html`Rotate <span class="dialog-key"></span>?`,
        text: html`A successor key with the same label, scopes and expiry length is created and shown once.
        The current key keeps working until the grace period ends, then expires.`,
        fields: field({
          id: 'graceHours',
          label: 'Grace period (hours)',
          type: 'number',
          hint: `0 to ${MAX_GRACE_HOURS} (7 days). 0 ends the current key at once.`,
          attrs: html`required min="0" max="${MAX_GRACE_HOURS}" step="1" value="${DEFAULT_GRACE_HOURS}"
          inputmode="numeric"`,
        }),
        confirm: 'Rotate key',
      })}
      ${confirmDialog({
        name: 'revoke',
        title: html`Revoke <span class="dialog-key"></span>?`,
        text: html`Every request with this key is refused from now on (within a second, everywhere). This
        cannot be undone.`,
        confirm: 'Revoke key',
        danger: true,
      })}
      ${confirmDialog({
        name: 'upgrade',
        title: html`Upgrade to the service plan?`,
        text: html`${service.aiCallsPerMonth.toLocaleString('en-US')} AI calls a month,
        ${service.requestsPerMinute.toLocaleString('en-US')} requests a minute per key and batches of up to
        ${service.batchMaxItems.toLocaleString('en-US')} items. The change is recorded on your workspace at
        once; usage is billed on the monthly statement.`,
        confirm: 'Upgrade',
      })}
      ${confirmDialog({
        name: 'downgrade',
        title: html`Go back to the Free plan?`,
        text: html`The workspace moves to Free at once:
        ${config.plans.free.aiCallsPerMonth.toLocaleString('en-US')} AI calls a month and the Free plan's rate
        limits. A trial ends now. Keys keep working. The change is recorded in the audit log.`,
        confirm: 'Go back to Free',
        danger: true,
      })}`,
  });
}
