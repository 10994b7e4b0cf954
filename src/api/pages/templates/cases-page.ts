import { EXPORT_FORMATS } from '../../../domain/exports/formats.js';
import { CASE_STATUSES } from '../../../domain/cases/case-status.js';
import { PRIORITIES, RECOMMENDED_ACTIONS, SEVERITIES } from '../../../domain/triage-engine/types.js';
import { CASE_SORTS } from '../../../domain/cases/case-sort.js';
import { BULK_MAX, consoleCasesQuery } from '../../schemas/console-data.js';
import { html, type SafeHtml } from '../html.js';
import { layout } from './layout.js';
import { accountNav } from './settings-nav.js';
import { acceptanceField, ownerForm } from './case-owner-fields.js';

export const STATUS_NAMES: Record<string, string> = {
  open: 'Open',
  in_progress: 'In progress',
  resolved: 'Resolved',
  risk_accepted: 'Risk accepted',
  false_positive: 'False positive',
};

const FORMAT_NAMES: Record<string, string> = {
  csv: 'CSV',
  jsonl: 'JSON Lines',
  sarif: 'SARIF 2.1.0',
  'cyclonedx-vex': 'CycloneDX VEX',
};

const title = (s: string): string => s[0] + s.slice(1).toLowerCase();

export const ACTION_NAMES: Record<string, string> = {
  PATCH_IMMEDIATELY: 'Patch immediately',
  PATCH_SCHEDULED: 'Patch in the next window',
  MITIGATE: 'Mitigate',
  MONITOR: 'Monitor',
  INVESTIGATE: 'Investigate',
  ACCEPT_RISK: 'Accept the risk',
};

const SORT_NAMES: Record<string, string> = {
  priority: 'Priority (most urgent first)',
  lastSeen: 'Last seen (newest first)',
  firstSeen: 'First seen (newest first)',
  epss: 'EPSS (highest first)',
  dueAt: 'Due date (soonest first)',
};

/** A yes/no/any filter (`triaged`, `stale`, `kev`). */
function yesNo(name: string, label: string, yes: string, no: string): SafeHtml {
  return html`<div class="field">
    <label for="f-${name}">${label}</label>
    <select id="f-${name}" name="${name}">
      <option value="">Any</option>
      <option value="true">${yes}</option>
      <option value="false">${no}</option>
    </select>
  </div>`;
}

const has = (name: string): boolean => CASE_PARAMS.includes(name);

/** The query parameters `GET /api/v1/cases` takes: the page passes exactly these from its URL to the API. */
export const CASE_PARAMS = Object.keys(consoleCasesQuery.properties);

function checkboxes(
  name: string,
  legend: string,
  values: readonly string[],
  label: (v: string) => string,
): SafeHtml {
  return html`<fieldset class="field checks">
    <legend>${legend}</legend>
    ${values.map(
      (v) =>
        html`<label class="check"><input type="checkbox" name="${name}" value="${v}" /> ${label(v)}</label>`,
    )}
  </fieldset>`;
}

function textFilter(name: string, label: string, attrs: SafeHtml = html``): SafeHtml {
  return html`<div class="field">
    <label for="f-${name}">${label}</label>
    <input id="f-${name}" name="${name}" type="text" autocomplete="off" ${attrs} />
  </div>`;
}

/**
 * Cases (docs/console.md#cases): a GET form of filters (so the URL is the state: shareable, and the back
 * button works), counts by severity over the filter, the table with cursor paging, and the bulk
 * actions (status change with a note; owner and tags; export). `cases.js` talks to `/api/console/cases`.
 */
export function casesPage(): SafeHtml {
  return layout({
    title: 'Cases',
    script: 'cases.js',
    bodyClass: 'data-page',
    nav: accountNav('Cases'),
    main: html`<div class="page-head"><h1 id="page-title">Cases</h1></div>
      <div id="page-error" class="alert alert-error" role="alert" tabindex="-1" hidden></div>
      <div id="page-notice" class="alert alert-success" role="status" hidden></div>

      <section class="card" id="cases-card" aria-labelledby="cases-title" aria-busy="true">
        <h2 id="cases-title" class="sr-only">Cases of this workspace</h2>
        <form
          id="case-filters"
          class="filters"
          method="get"
          action="/cases"
          role="search"
          data-params="${CASE_PARAMS.join(',')}"
        >
          ${has('priority') ? checkboxes('priority', 'Priority (AI triage)', PRIORITIES, title) : ''}
          ${checkboxes('severity', 'Severity (scanner)', SEVERITIES, title)}
          ${checkboxes('status', 'Status', CASE_STATUSES, (s) => STATUS_NAMES[s] ?? s)}
          ${has('action') ? checkboxes('action', 'Recommended action', RECOMMENDED_ACTIONS, (a) => ACTION_NAMES[a] ?? a) : ''}
          ${yesNo('kev', 'CISA KEV', 'In KEV', 'Not in KEV')}
          ${has('triaged') ? yesNo('triaged', 'Triaged', 'Triaged', 'Not triaged') : ''}
          ${has('stale') ? yesNo('stale', 'Triage stale', 'Stale', 'Up to date') : ''}
          ${textFilter('cve', 'CVE', html`placeholder="CVE-2021-44228" maxlength="30"`)}
          ${textFilter('asset', 'Asset', html`maxlength="300"`)}
          ${textFilter('scan', 'Scan id', html`maxlength="100"`)}
          ${has('scanner') ? textFilter('scanner', 'Scanner', html`maxlength="100"`) : ''}
          ${has('assignee') ? textFilter('assignee', 'Owner', html`type="email" maxlength="254"`) : ''}
          ${has('unassigned') ? yesNo('unassigned', 'Owned', 'Nobody owns it', 'Someone owns it') : ''}
          ${has('tag') ? textFilter('tag', 'Tag', html`maxlength="32"`) : ''}
          ${
            has('epssMin')
              ? html`<div class="field">
                  <label for="f-epssMin">EPSS at least</label>
                  <input
                    id="f-epssMin"
                    name="epssMin"
                    type="number"
                    min="0"
                    max="1"
                    step="0.01"
                    placeholder="0.10"
                    inputmode="decimal"
                  />
                </div>`
              : ''
          }
          ${
            has('sort')
              ? html`<div class="field">
                  <label for="f-sort">Sort by</label>
                  <select id="f-sort" name="sort">
                    <option value="">Newest case first</option>
                    ${CASE_SORTS.map((v) => html`<option value="${v}">${SORT_NAMES[v] ?? v}</option>`)}
                  </select>
                </div>`
              : ''
          }
          <input id="f-limit" name="limit" type="hidden" disabled />
          <div class="filter-actions">
            <button type="submit" class="btn btn-primary">Apply filters</button>
            <a class="btn btn-quiet" href="/cases">Clear</a>
          </div>
        </form>

        <dl class="stats tiles counts" id="case-counts" aria-live="polite">
          <div class="tile">
            <dt>Matching</dt>
            <dd id="count-total">&hellip;</dd>
          </div>
          ${[...PRIORITIES, 'UNTRIAGED'].map(
            (p) =>
              html`<div class="tile sev-${p.toLowerCase()}">
                <dt>${p === 'UNTRIAGED' ? 'Not triaged' : `${title(p)} priority`}</dt>
                <dd><a id="count-priority-${p}" href="/cases">&hellip;</a></dd>
              </div>`,
          )}
        </dl>
        <p class="hint" id="severity-counts">
          By scanner severity:
          ${SEVERITIES.map(
            (s) =>
              html`<span class="sev sev-${s.toLowerCase()}"
                >${title(s)} <span id="count-severity-${s}">&hellip;</span></span
              > `,
          )}
        </p>

        <details class="bulk" id="bulk">
          <summary>Bulk actions</summary>
          <form id="bulk-form" class="bulk-form" novalidate data-needs-role="member">
            <fieldset class="field">
              <legend>Apply to</legend>
              <label class="check"
                ><input type="radio" name="scope" value="selected" checked />
                <span id="scope-selected">The selected cases (0)</span></label
              >
              <label class="check"
                ><input type="radio" name="scope" value="filter" />
                <span id="scope-filter">Every case matching the filters</span></label
              >
              <p class="hint">At most ${BULK_MAX} cases at a time.</p>
            </fieldset>
            <div class="field">
              <label for="bulk-status">New status</label>
              <select id="bulk-status" name="status">
                ${CASE_STATUSES.map((s) => html`<option value="${s}">${STATUS_NAMES[s] ?? s}</option>`)}
              </select>
            </div>
            ${acceptanceField('bulk-expires')}
            <div class="field">
              <label for="bulk-note">Note <span class="hint">(kept in each case's history)</span></label>
              <textarea id="bulk-note" name="note" maxlength="2000" rows="2"></textarea>
            </div>
            <div class="filter-actions">
              <button type="submit" class="btn btn-primary" id="bulk-submit">Change status</button>
            </div>
          </form>
          ${ownerForm('bulk-owner', 'Set owner and tags')}
          <form id="triage-form" class="bulk-form" novalidate data-needs-role="admin">
            <div class="field">
              <label for="triage-key">AI triage, billed to key</label>
              <select id="triage-key" name="key" aria-describedby="triage-key-hint"></select>
              <p class="hint" id="triage-key-hint">A key with the cases:write and triage:write scopes.</p>
            </div>
            <div class="filter-actions">
              <button type="submit" class="btn" id="triage-check">Triage with AI&hellip;</button>
            </div>
            <div id="triage-confirm" class="confirm" hidden>
              <p id="triage-summary"></p>
              <button type="button" class="btn btn-primary" id="triage-go">Triage</button>
              <button type="button" class="btn btn-quiet" id="triage-cancel">Cancel</button>
            </div>
            <p id="triage-status" role="status" class="hint"></p>
          </form>
          <form id="export-form" class="bulk-form" novalidate>
            <div class="field">
              <label for="export-format">Export the cases matching the filters as</label>
              <select id="export-format" name="format">
                ${EXPORT_FORMATS.map((f) => html`<option value="${f}">${FORMAT_NAMES[f] ?? f}</option>`)}
              </select>
            </div>
            <div class="filter-actions">
              <button type="submit" class="btn" id="export-submit">Export</button>
              <progress
                id="export-progress"
                max="100"
                value="0"
                hidden
                aria-label="Export progress"
              ></progress>
              <span id="export-status" role="status" class="hint"></span>
              <a id="export-link" class="btn btn-primary" href="/cases" download hidden
                >Download the export</a
              >
            </div>
          </form>
        </details>

        <p id="cases-loading" class="loading" role="status">Loading cases&hellip;</p>
        <p id="cases-empty" class="empty" hidden>No cases match these filters.</p>
        <div id="cases-wrap" class="table-wrap" hidden>
          <table class="data stack-on-phone" id="cases-table">
            <caption class="sr-only">
              Cases matching the filters, newest first
            </caption>
            <thead>
              <tr>
                <th scope="col" class="select">
                  <input type="checkbox" id="select-all" aria-label="Select every case on this page" />
                </th>
                <th scope="col">Priority</th>
                <th scope="col">Severity</th>
                <th scope="col">Case</th>
                <th scope="col">Asset</th>
                <th scope="col">CVEs</th>
                <th scope="col" class="num">EPSS</th>
                <th scope="col">Status</th>
                <th scope="col">Owner</th>
                <th scope="col">Due <span class="th-sub">UTC</span></th>
                <th scope="col">Last seen <span class="th-sub">UTC</span></th>
                <th scope="col" class="num">Sightings</th>
              </tr>
            </thead>
            <tbody id="cases-body"></tbody>
          </table>
        </div>
        <nav class="pager" aria-label="Case pages">
          <a id="first-page" class="btn" href="/cases" hidden>First page</a>
          <a id="next-page" class="btn" href="/cases" hidden>Next page</a>
        </nav>
      </section>`,
  });
}
