import { AUDIT_ACTIONS } from '../../../db/entities/index.js';
import { html, type SafeHtml } from '../html.js';
import { dataTable } from './layout.js';
import { settingsLayout } from './settings-nav.js';

/** How each audit action reads in the filter and the table. */
export const ACTION_NAMES: Record<(typeof AUDIT_ACTIONS)[number], string> = {
  create: 'Key created',
  reveal: 'Key revealed',
  rotate: 'Key rotated',
  revoke: 'Key revoked',
  expire: 'Key expired',
  plan_change: 'Plan changed',
  workflow_create: 'Workflow created',
  workflow_update: 'Workflow changed',
  workflow_enable: 'Workflow enabled',
  workflow_disable: 'Workflow disabled',
  workflow_delete: 'Workflow deleted',
  scan_delete: 'Scan deleted',
  invitation_create: 'Member invited',
  invitation_revoke: 'Invitation revoked',
  invitation_accept: 'Invitation accepted',
  member_remove: 'Member removed',
  member_role_change: 'Role changed',
  ownership_transfer: 'Ownership transferred',
  password_reset_request: 'Password reset asked',
  password_reset: 'Password reset',
  sso_update: 'Single sign-on changed',
  sso_sign_in: 'Signed in with SSO',
  sso_sign_in_failed: 'SSO sign-in failed',
  workspace_delete: 'Workspace deletion requested',
  retention_change: 'Retention changed',
  sla_policy_change: 'SLA policy changed',
};

/**
 * Settings > Audit log (docs/console.md#audit-log): who did what to the workspace's keys
 * and plan, from where. The filters are a plain GET form, so they live in the URL (a reload or
 * a shared link keeps them) and work from the keyboard; `audit-log.js` reads the URL, asks
 * `GET /api/console/audit-events` and draws the table and the next-page link.
 */
export function auditPage(): SafeHtml {
  return settingsLayout({
    current: '/settings/audit-log',
    script: 'audit-log.js',
    main: html`<section class="card" id="audit-card" aria-labelledby="audit-title" aria-busy="true">
      <h2 id="audit-title" class="sr-only">Audit events</h2>
      <form id="audit-filters" class="filters" method="get" action="/settings/audit-log" role="search">
        <div class="field">
          <label for="key">Key</label>
          <select id="key" name="key">
            <option value="">All keys</option>
          </select>
        </div>
        <div class="field">
          <label for="action">Action</label>
          <select id="action" name="action">
            <option value="">All actions</option>
            ${AUDIT_ACTIONS.map((a) => html`<option value="${a}">${ACTION_NAMES[a]}</option>`)}
          </select>
        </div>
        <div class="field">
          <label for="from">From (UTC)</label>
          <input id="from" name="from" type="date" />
        </div>
        <div class="field">
          <label for="to">To (UTC, inclusive)</label>
          <input id="to" name="to" type="date" />
        </div>
        <input id="limit" name="limit" type="hidden" disabled />
        <div class="filter-actions">
          <button type="submit" class="btn btn-primary">Apply filters</button>
          <a class="btn btn-quiet" href="/settings/audit-log">Clear</a>
        </div>
      </form>
      <p class="hint">Newest first. Times are UTC. Every key change and plan change is recorded here.</p>
      ${dataTable({
        name: 'audit',
        loading: 'Loading audit events',
        empty: 'No audit events match these filters.',
        caption: 'Audit events of this workspace, newest first',
        columns: html` <th scope="col">Time <span class="th-sub">UTC</span></th>
          <th scope="col">Action</th>
          <th scope="col">Actor</th>
          <th scope="col">IP address</th>
          <th scope="col">User agent</th>
          <th scope="col">Key</th>
          <th scope="col">Details</th>`,
      })}
      <nav class="pager" aria-label="Audit log pages">
        <a id="first-page" class="btn" href="/settings/audit-log" hidden>Newest events</a>
        <a id="next-page" class="btn" href="/settings/audit-log" hidden>Older events</a>
      </nav>
    </section>`,
  });
}
