import type { Config } from '../../../lib/config.js';
import { SCOPES, FIRST_KEY_SCOPES, type Scope } from '../../../domain/keys/scopes.js';
import { DEFAULT_GRACE_HOURS, EXPIRY_DAYS, MAX_GRACE_HOURS } from '../../../domain/keys/key-lifecycle.js';
import { html, type SafeHtml } from '../html.js';
import { field, layout } from './layout.js';
import { accountNav, settingsHead } from './settings-nav.js';

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
 * Settings > API keys (docs/console.md#sign-up-and-api-keys): the workspace card, the keys table, the create form,
 * the monthly statement, and the confirmation dialogs. The server renders the frame and
 * the choices that come from configuration; `settings.js` fills in the data, so every
 * section starts in a visible loading state.
 */
export function settingsPage(config: Pick<Config, 'plans'>): SafeHtml {
  const service = config.plans.service;
  return layout({
    title: 'Settings › API keys',
    script: 'settings.js',
    bodyClass: 'settings',
    nav: accountNav(),
    main: html`${settingsHead('/settings/api-keys', 'API keys')}
      <div id="page-error" class="alert alert-error" role="alert" tabindex="-1" hidden></div>
      <div id="page-notice" class="alert alert-success" role="status" hidden></div>

      <div id="trial-banner" class="banner" hidden>
        <p>
          <strong id="trial-days"></strong> on your trial of the service plan (ends
          <span id="trial-ends"></span>). Afterwards the workspace falls back to Free by itself.
        </p>
        <button type="button" class="btn btn-primary" data-action="upgrade">Upgrade to service plan</button>
      </div>

      <section class="card" id="workspace-card" aria-labelledby="ws-title" aria-busy="true">
        <div class="card-head">
          <h2 id="ws-title">Workspace</h2>
          <div class="head-actions">
            <button type="button" id="upgrade-btn" class="btn" data-action="upgrade" hidden>
              Upgrade to service plan
            </button>
            <button type="button" id="downgrade-btn" class="btn btn-quiet" hidden>Go back to Free</button>
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

      <section class="card" id="keys-card" aria-labelledby="keys-title" aria-busy="true">
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
        <p id="keys-loading" class="loading" role="status">Loading keys&hellip;</p>
        <p id="keys-empty" class="empty" hidden>No keys yet. Create one below to call the API.</p>
        <div id="keys-wrap" class="table-wrap" hidden>
          <table class="data stack-on-phone" id="keys-table">
            <caption class="sr-only">
              API keys of this workspace, newest first
            </caption>
            <thead>
              <tr>
                <th scope="col">Key <span class="th-sub">label and masked secret</span></th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used <span class="th-sub">UTC</span></th>
                <th scope="col">Status</th>
                <th scope="col" class="num">Requests</th>
                <th scope="col" class="num">Tokens</th>
                <th scope="col" class="num">Spend</th>
                <th scope="col"><span class="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody id="keys-body"></tbody>
          </table>
        </div>
      </section>

      <section class="card" id="create-key" aria-labelledby="create-title" tabindex="-1">
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
        <p id="statement-loading" class="loading" role="status">Loading statement&hellip;</p>
        <p id="statement-empty" class="empty" hidden></p>
        <div id="statement-wrap" class="table-wrap" hidden>
          <table class="data stack-on-phone" id="statement-table">
            <caption class="sr-only">
              Statement lines per key and model tier
            </caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Tier</th>
                <th scope="col" class="num">AI calls</th>
                <th scope="col" class="num">Input tokens</th>
                <th scope="col" class="num">Output tokens</th>
                <th scope="col" class="num">Spend</th>
              </tr>
            </thead>
            <tbody id="statement-body"></tbody>
            <tfoot id="statement-foot"></tfoot>
          </table>
        </div>
      </section>

      <dialog id="rotate-dialog" aria-labelledby="rotate-title" aria-describedby="rotate-desc">
        <form method="dialog" class="stack">
          <h2 id="rotate-title">Rotate <span class="dialog-key"></span>?</h2>
          <p id="rotate-desc">
            A successor key with the same label, scopes and expiry length is created and shown once. The
            current key keeps working until the grace period ends, then expires.
          </p>
          ${field({ id: 'graceHours', label: 'Grace period (hours)', type: 'number', hint: `0 to ${MAX_GRACE_HOURS} (7 days). 0 ends the current key at once.`, attrs: html`required min="0" max="${MAX_GRACE_HOURS}" step="1" value="${DEFAULT_GRACE_HOURS}" inputmode="numeric"` })}
          <div class="dialog-actions">
            <button type="submit" value="cancel" class="btn" formnovalidate>Cancel</button>
            <button type="submit" value="confirm" class="btn btn-primary">Rotate key</button>
          </div>
        </form>
      </dialog>

      <dialog id="revoke-dialog" aria-labelledby="revoke-title" aria-describedby="revoke-desc">
        <form method="dialog" class="stack">
          <h2 id="revoke-title">Revoke <span class="dialog-key"></span>?</h2>
          <p id="revoke-desc">
            Every request with this key is refused from now on (within a second, everywhere). This cannot be
            undone.
          </p>
          <div class="dialog-actions">
            <button type="submit" value="cancel" class="btn">Cancel</button>
            <button type="submit" value="confirm" class="btn btn-danger">Revoke key</button>
          </div>
        </form>
      </dialog>

      <dialog id="upgrade-dialog" aria-labelledby="upgrade-title" aria-describedby="upgrade-desc">
        <form method="dialog" class="stack">
          <h2 id="upgrade-title">Upgrade to the service plan?</h2>
          <p id="upgrade-desc">
            ${service.aiCallsPerMonth.toLocaleString('en-US')} AI calls a month,
            ${service.requestsPerMinute.toLocaleString('en-US')} requests a minute per key and batches of up
            to ${service.batchMaxItems.toLocaleString('en-US')} items. The change is recorded on your
            workspace at once; usage is billed on the monthly statement.
          </p>
          <div class="dialog-actions">
            <button type="submit" value="cancel" class="btn">Cancel</button>
            <button type="submit" value="confirm" class="btn btn-primary">Upgrade</button>
          </div>
        </form>
      </dialog>

      <dialog id="downgrade-dialog" aria-labelledby="downgrade-title" aria-describedby="downgrade-desc">
        <form method="dialog" class="stack">
          <h2 id="downgrade-title">Go back to the Free plan?</h2>
          <p id="downgrade-desc">
            The workspace moves to Free at once: ${config.plans.free.aiCallsPerMonth.toLocaleString('en-US')}
            AI calls a month and the Free plan's rate limits. A trial ends now. Keys keep working. The change
            is recorded in the audit log.
          </p>
          <div class="dialog-actions">
            <button type="submit" value="cancel" class="btn">Cancel</button>
            <button type="submit" value="confirm" class="btn btn-danger">Go back to Free</button>
          </div>
        </form>
      </dialog>`,
  });
}
