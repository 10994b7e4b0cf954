import { CASE_STATUSES } from '../../../domain/cases/case-status.js';
import { html, type SafeHtml } from '../html.js';
import { layout } from './layout.js';
import { accountNav } from './settings-nav.js';
import { STATUS_NAMES } from './cases-page.js';
import { acceptanceField, ownerForm } from './case-owner-fields.js';

/**
 * One case (docs/console.md#cases): what it is and where, its CVEs (linked to NVD) with KEV, EPSS and CVSS,
 * its status with a change form and the history, and its evidence a page at a time. The server
 * has already checked the case is in the session's workspace; `case.js` fills the frame.
 */
export function casePage(id: string): SafeHtml {
  return layout({
    title: 'Case',
    script: 'case.js',
    bodyClass: 'data-page',
    nav: accountNav('Cases'),
    main: html`<div class="page-head" id="case-head" data-case-id="${id}">
        <p class="crumbs"><a href="/cases">Cases</a> <span aria-hidden="true">&rsaquo;</span></p>
        <h1 id="page-title" class="case-heading">Case</h1>
        <p id="case-sub" class="hint"></p>
      </div>
      <div id="page-error" class="alert alert-error" role="alert" tabindex="-1" hidden></div>
      <div id="page-notice" class="alert alert-success" role="status" hidden></div>

      <div class="case-grid" id="case-card" aria-busy="true">
        <section class="card" aria-labelledby="facts-title">
          <h2 id="facts-title">Details</h2>
          <dl class="facts" id="case-facts"></dl>
        </section>

        <section class="card" aria-labelledby="cves-title">
          <h2 id="cves-title">CVEs and exploit signals</h2>
          <p id="cves-empty" class="empty" hidden>This case names no CVE.</p>
          <div class="table-wrap">
            <table class="data stack-on-phone" id="cves-table" hidden>
              <thead>
                <tr>
                  <th scope="col">CVE</th>
                  <th scope="col">CISA KEV</th>
                  <th scope="col">EPSS</th>
                  <th scope="col">CVSS</th>
                </tr>
              </thead>
              <tbody id="cves-body"></tbody>
            </table>
          </div>
          <details id="cves-more" class="cves-more" hidden>
            <summary id="cves-more-summary"></summary>
            <div class="table-wrap">
              <table class="data stack-on-phone">
                <thead>
                  <tr>
                    <th scope="col">CVE</th>
                    <th scope="col">CISA KEV</th>
                    <th scope="col">EPSS</th>
                    <th scope="col">CVSS</th>
                  </tr>
                </thead>
                <tbody id="cves-more-body"></tbody>
              </table>
            </div>
          </details>
        </section>

        <section class="card" aria-labelledby="triage-title" id="triage-card">
          <h2 id="triage-title">AI triage</h2>
          <p id="triage-stale" class="alert alert-warning" hidden>
            The exploit signals changed since this triage (KEV, EPSS or CVSS): triage again for a fresh
            answer.
          </p>
          <p id="triage-none" class="empty" hidden>Not triaged yet.</p>
          <dl class="facts" id="triage-now" hidden></dl>
          <form id="triage-form" class="bulk-form" novalidate data-needs-role="admin">
            <div class="field">
              <label for="triage-key">Bill the AI call to key</label>
              <select id="triage-key" name="key"></select>
            </div>
            <button type="submit" class="btn" id="triage-submit">Triage now (1 AI call)</button>
          </form>
          <details id="triage-history-wrap" hidden>
            <summary>Earlier answers</summary>
            <ol id="triage-history" class="history"></ol>
          </details>
        </section>

        <section class="card" aria-labelledby="status-title">
          <h2 id="status-title">Status</h2>
          <form id="status-form" class="bulk-form" novalidate data-needs-role="member">
            <div class="field">
              <label for="case-status">Status</label>
              <select id="case-status" name="status">
                ${CASE_STATUSES.map((s) => html`<option value="${s}">${STATUS_NAMES[s] ?? s}</option>`)}
              </select>
            </div>
            ${acceptanceField('status-expires')}
            <div class="field">
              <label for="status-note">Note <span class="hint">(required to accept a risk)</span></label>
              <textarea id="status-note" name="note" maxlength="2000" rows="2"></textarea>
            </div>
            <button type="submit" class="btn btn-primary">Save status</button>
          </form>
          <h3 class="h3" data-needs-role="member">Owner and tags</h3>
          ${ownerForm('case-owner', 'Save owner and tags')}
          <h3 class="h3">History</h3>
          <p id="history-empty" class="empty" hidden>No status changes yet.</p>
          <ol id="history" class="history"></ol>
        </section>

        <section class="card" aria-labelledby="links-title" id="links-card" hidden>
          <h2 id="links-title">External issues</h2>
          <ul id="links" class="details"></ul>
        </section>

        <section class="card wide" aria-labelledby="evidence-title">
          <h2 id="evidence-title">Evidence</h2>
          <p class="hint">Each sighting, newest first, with the scanner's raw excerpt.</p>
          <ol id="evidence" class="evidence"></ol>
          <button type="button" id="evidence-more" class="btn" hidden>Older sightings</button>
        </section>
      </div>`,
  });
}

/** The case page of an id that is not a case of this workspace (another workspace's included). */
export function caseNotFoundPage(): SafeHtml {
  return layout({
    title: 'Case not found',
    script: 'dashboard.js',
    bodyClass: 'data-page',
    nav: accountNav('Cases'),
    main: html`<div class="page-head">
        <p class="crumbs"><a href="/cases">Cases</a> <span aria-hidden="true">&rsaquo;</span></p>
        <h1 id="page-title">No such case</h1>
      </div>
      <div id="page-error" class="alert alert-error" role="alert" tabindex="-1" hidden></div>
      <section class="card">
        <p>This workspace has no case with that id. <a href="/cases">Back to the cases</a>.</p>
      </section>`,
  });
}
