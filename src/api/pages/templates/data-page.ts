import { html, type SafeHtml } from '../html.js';
import { field } from './layout.js';
import { settingsLayout } from './settings-nav.js';

/**
 * Settings > Data (docs/console.md#data-retention-archive-and-deletion): how long raw scan files
 * are kept, the workspace archive, and "Delete workspace" after typing its name. `data.js` reads
 * and writes `/api/console/workspace/retention`, links the archive and posts the deletion, then
 * polls its status until the removal finished. The actions are an owner's: the API refuses others.
 */
export function dataPage(): SafeHtml {
  return settingsLayout({
    current: '/settings/data',
    script: 'data.js',
    notices: true,
    main: html`<section class="card" aria-labelledby="retention-title">
        <h2 id="retention-title">Raw scan files</h2>
        <form id="retention-form" class="stack" novalidate aria-busy="true">
          ${field({
            id: 'scanFileRetentionDays',
            label: 'Keep raw scan files for (days)',
            type: 'number',
            hint: 'Leave blank to keep them. Findings and cases are always kept; only the uploaded files go.',
            attrs: html`min="1" max="3650" step="1" inputmode="numeric"`,
          })}
          <div data-needs-role="owner">
            <button type="submit" class="btn btn-primary">Save retention</button>
          </div>
        </form>
      </section>
      <section class="card" aria-labelledby="archive-title" data-needs-role="owner">
        <h2 id="archive-title">Workspace archive</h2>
        <p class="hint">
          Cases with their status and triage history, the audit log and the usage statements, as one .tar.gz.
        </p>
        <p>
          <a class="btn" id="archive-link" href="/api/console/workspace/archive" download>Download archive</a>
        </p>
      </section>
      <section class="card" aria-labelledby="delete-title" data-needs-role="owner">
        <h2 id="delete-title">Delete workspace</h2>
        <p class="hint">
          Every key is revoked at once and everyone is signed out; then its scans, findings, cases, exports,
          workflows and stored files are removed. This cannot be undone: download the archive first.
        </p>
        <form id="delete-form" class="stack" novalidate>
          ${field({
            id: 'confirmName',
            label: "Type the workspace's name to confirm",
            attrs: html`required maxlength="120"`,
          })}
          <div><button type="submit" class="btn btn-danger">Delete workspace</button></div>
        </form>
        <p id="delete-status" role="status" hidden></p>
      </section>`,
  });
}
