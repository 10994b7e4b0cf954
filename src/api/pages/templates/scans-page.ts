import { SCAN_FORMAT_LABELS, SCAN_FORMATS } from '../../../domain/scans/scan-formats.js';
import { consoleUploadQuery } from '../../schemas/console-data.js';
import { html, type SafeHtml } from '../html.js';
import { layout } from './layout.js';
import { accountNav } from './settings-nav.js';

/** The upload's `triage` option, shown only once the upload route takes it. */
function triageField(): SafeHtml {
  const props = consoleUploadQuery.properties as Record<string, { enum?: readonly string[] } | undefined>;
  const triage = props['triage'];
  if (!triage) return html``;
  const names: Record<string, string> = {
    none: 'None: triage later from the Cases page',
    new: 'New cases only',
    all: 'Every case the scan touches',
  };
  return html`<div class="field">
      <label for="upload-triage">AI triage after parsing</label>
      <p class="hint" id="upload-triage-hint">
        Each triaged case is one AI call of this month's, billed to the key below; riskiest cases first.
      </p>
      <select id="upload-triage" name="triage" aria-describedby="upload-triage-hint">
        ${(triage.enum ?? ['none', 'new', 'all']).map(
          (v) => html`<option value="${v}" ${v === 'none' ? html`selected` : ''}>${names[v] ?? v}</option>`,
        )}
      </select>
    </div>
    <div class="field">
      <label for="upload-key">Upload as key</label>
      <p class="hint" id="upload-key-hint">Needed for AI triage (the key needs the triage:write scope).</p>
      <select id="upload-key" name="key" aria-describedby="upload-key-hint">
        <option value="">No key: a console upload</option>
      </select>
    </div>`;
}

/**
 * Scans (docs/console.md#scans): upload a scan from the browser (drag and drop or the file picker, with a
 * progress bar) and the workspace's scans newest first, their parse progress live while they
 * are queued or parsing. `scans.js` talks to `/api/console/scans`.
 */
export function scansPage(): SafeHtml {
  return layout({
    title: 'Scans',
    script: 'scans.js',
    bodyClass: 'data-page',
    nav: accountNav('Scans'),
    main: html`<div class="page-head"><h1 id="page-title">Scans</h1></div>
      <div id="page-error" class="alert alert-error" role="alert" tabindex="-1" hidden></div>

      <section class="card" aria-labelledby="upload-title" data-needs-role="member">
        <h2 id="upload-title">Upload a scan</h2>
        <form id="upload-form" class="upload" novalidate>
          <div id="drop-zone" class="drop-zone">
            <label for="upload-file">
              <span class="drop-title">Drop a scan file here, or choose one</span>
              <span class="hint"
                >Nessus, Qualys, OpenVAS, SARIF, CycloneDX or CLI findings JSON; the format is detected.</span
              >
            </label>
            <input id="upload-file" name="file" type="file" required />
            <p id="upload-file-name" class="file-name" aria-live="polite"></p>
          </div>
          <div class="form-grid">
            <div class="field">
              <label for="upload-name">Name <span class="hint">(optional)</span></label>
              <input id="upload-name" name="name" type="text" maxlength="200" autocomplete="off" />
            </div>
            <div class="field">
              <label for="upload-asset">Asset <span class="hint">(optional)</span></label>
              <input id="upload-asset" name="asset" type="text" maxlength="200" autocomplete="off" />
            </div>
            <div class="field">
              <label for="upload-format">Format</label>
              <select id="upload-format" name="format">
                <option value="">Detect from the file</option>
                ${SCAN_FORMATS.map((f) => html`<option value="${f}">${SCAN_FORMAT_LABELS[f]}</option>`)}
              </select>
            </div>
            ${triageField()}
          </div>
          <div class="upload-actions">
            <button type="submit" class="btn btn-primary" id="upload-submit">Upload</button>
            <progress id="upload-progress" max="100" value="0" hidden aria-label="Upload progress"></progress>
            <span id="upload-status" role="status" class="hint"></span>
          </div>
        </form>
      </section>

      <section class="card" id="scans-card" aria-labelledby="scans-title" aria-busy="true">
        <div class="card-head">
          <h2 id="scans-title">Scans</h2>
          <p class="hint">Newest first. Times are UTC. Parsing progress updates by itself.</p>
        </div>
        <p id="scans-loading" class="loading" role="status">Loading scans&hellip;</p>
        <p id="scans-empty" class="empty" hidden>No scans yet. Upload one above or with the CLI.</p>
        <div id="scans-wrap" class="table-wrap" hidden>
          <table class="data stack-on-phone" id="scans-table">
            <caption class="sr-only">
              Scans of this workspace, newest first
            </caption>
            <thead>
              <tr>
                <th scope="col">Scan</th>
                <th scope="col">Uploaded</th>
                <th scope="col">Status</th>
                <th scope="col">Findings by severity</th>
                <th scope="col" class="num">New cases</th>
                <th scope="col" class="num">Duplicates</th>
              </tr>
            </thead>
            <tbody id="scans-body"></tbody>
          </table>
        </div>
        <nav class="pager" aria-label="Scan pages">
          <a id="first-page" class="btn" href="/scans" hidden>Newest scans</a>
          <a id="next-page" class="btn" href="/scans" hidden>Older scans</a>
        </nav>
      </section>`,
  });
}
