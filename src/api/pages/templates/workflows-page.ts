import { CASE_STATUSES } from '../../../domain/cases/case-status.js';
import { PRIORITIES, SEVERITIES } from '../../../domain/triage-engine/types.js';
import { html, type SafeHtml } from '../html.js';
import { field } from './layout.js';
import { settingsLayout } from './settings-nav.js';

const title = (s: string): string => s[0] + s.slice(1).toLowerCase();

function checks(name: string, legend: string, values: readonly string[]): SafeHtml {
  return html`<fieldset class="field checks">
    <legend>${legend}</legend>
    ${values.map(
      (v) =>
        html`<label class="check"
          ><input type="checkbox" name="${name}" value="${v}" /> ${title(v).replace('_', ' ')}</label
        >`,
    )}
  </fieldset>`;
}

/**
 * Settings > Workflows (docs/console.md#workflows): the workspace's mapped workflows (target, rule, last delivery
 * and its error), a form to create or edit one with a live preview of the mapped fields for a
 * sample case, a test delivery, and each workflow's recent deliveries. `workflows.js` talks to
 * `/api/console/workflows`, which calls the same workflow service as `/api/v1/workflows`.
 */
export function workflowsPage(): SafeHtml {
  return settingsLayout({
    current: '/settings/workflows',
    script: 'workflows.js',
    notices: true,
    main: html`<section class="card" id="workflows-card" aria-labelledby="wf-title" aria-busy="true">
        <h2 id="wf-title">Workflows</h2>
        <p class="hint">
          Cases matching a workflow's rule become issues in Jira or GitHub, or signed webhook calls.
        </p>
        <p id="wf-loading" class="loading" role="status">Loading workflows&hellip;</p>
        <p id="wf-empty" class="empty" hidden>No workflows yet. Create one below.</p>
        <div id="wf-wrap" class="table-wrap" hidden>
          <table class="data stack-on-phone" id="wf-table">
            <thead>
              <tr>
                <th scope="col">Workflow</th>
                <th scope="col">Rule</th>
                <th scope="col">Last delivery</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody id="wf-body"></tbody>
          </table>
        </div>
        <section id="deliveries" aria-labelledby="deliveries-title" hidden>
          <h3 id="deliveries-title" class="h3">Recent deliveries</h3>
          <ol id="deliveries-list" class="history"></ol>
        </section>
      </section>

      <section class="card" aria-labelledby="form-title" data-needs-role="admin">
        <h2 id="form-title">New workflow</h2>
        <form id="wf-form" class="stack" novalidate>
          ${field({ id: 'name', label: 'Name', attrs: html`maxlength="200" required` })}
          <div class="field">
            <label for="kind">Target</label>
            <select id="kind" name="kind">
              <option value="webhook">Signed webhook</option>
              <option value="jira">Jira Cloud issue</option>
              <option value="github">GitHub issue</option>
              <option value="slack">Slack message</option>
            </select>
          </div>
          <fieldset class="target" data-kind="webhook">
            <legend class="sr-only">Webhook</legend>
            ${field({ id: 'url', label: 'Webhook URL', type: 'url' })}
          </fieldset>
          <fieldset class="target" data-kind="jira" hidden>
            <legend class="sr-only">Jira</legend>
            ${field({ id: 'baseUrl', label: 'Jira site URL', type: 'url', hint: 'https://your-team.atlassian.net' })}
            ${field({ id: 'email', label: 'Jira account email', type: 'email' })}
            ${field({ id: 'apiToken', label: 'Jira API token', type: 'password', hint: 'Sealed at rest; never shown again.' })}
            ${field({ id: 'projectKey', label: 'Project key', hint: 'For example SEC' })}
          </fieldset>
          <fieldset class="target" data-kind="github" hidden>
            <legend class="sr-only">GitHub</legend>
            ${field({ id: 'owner', label: 'Owner' })} ${field({ id: 'repo', label: 'Repository' })}
            ${field({ id: 'token', label: 'GitHub token', type: 'password', hint: 'Sealed at rest; never shown again.' })}
          </fieldset>
          <fieldset class="target" data-kind="slack" hidden>
            <legend class="sr-only">Slack</legend>
            ${field({ id: 'slackUrl', label: 'Slack incoming webhook URL', type: 'password', hint: 'https://hooks.slack.com/services/…; sealed at rest, never shown again.' })}
          </fieldset>
          <div class="filters">
            ${checks('priority', 'Rule: priority', PRIORITIES)}
            ${checks('severity', 'Rule: severity', SEVERITIES)}
            ${checks('status', 'Rule: status', CASE_STATUSES)}
            <div class="field">
              <label for="rule-kev">Rule: CISA KEV</label>
              <select id="rule-kev" name="kev">
                <option value="">Any</option>
                <option value="true">In KEV only</option>
              </select>
            </div>
          </div>
          ${field({
            id: 'summary',
            label: 'Summary template',
            hint: 'Placeholders such as {{case.title}}, {{case.asset}}, {{case.cve}}, {{case.priority}}, {{case.epss}}.',
            attrs: html`maxlength="1000" value="{{case.title}} on {{case.asset}}"`,
          })}
          ${field({ id: 'labels', label: 'Labels', hint: 'Comma-separated; placeholders allowed.' })}
          <div class="preview" aria-live="polite">
            <h3 class="h3">Preview</h3>
            <p id="preview-case" class="hint">Loading a sample case&hellip;</p>
            <dl class="facts">
              <dt>Summary</dt>
              <dd id="preview-summary">&mdash;</dd>
              <dt>Labels</dt>
              <dd id="preview-labels">&mdash;</dd>
            </dl>
            <p id="preview-error" class="field-error" hidden></p>
          </div>
          <div class="filter-actions">
            <button type="submit" class="btn btn-primary" id="wf-submit">Create workflow</button>
            <button type="button" class="btn btn-quiet" id="wf-cancel" hidden>Cancel editing</button>
          </div>
        </form>
      </section>`,
  });
}
