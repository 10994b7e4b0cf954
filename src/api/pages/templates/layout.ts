import { html, type SafeHtml } from '../html.js';

export const PRODUCT_NAME = 'VulnTriage';

export interface LayoutOptions {
  title: string;
  /** Module under /assets/ that drives the page; scripts are never inline (strict CSP). */
  script: string;
  main: SafeHtml;
  /** Right-hand side of the top bar (e.g. the workspace name and Log out). */
  nav?: SafeHtml;
  bodyClass?: string;
}

/** The document around every console page: two stylesheets, one module script, no third parties. */
export function layout(o: LayoutOptions): SafeHtml {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <meta name="color-scheme" content="light" />
        <title>${o.title} · ${PRODUCT_NAME} console</title>
        <link rel="icon" href="/assets/favicon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href="/assets/console.css" />
        <link rel="stylesheet" href="/assets/console-data.css" />
        <script type="module" src="/assets/${o.script}"></script>
      </head>
      <body class="${o.bodyClass ?? ''}">
        <a class="skip-link" href="#main">Skip to content</a>
        <header class="topbar">
          <a class="brand" href="/"><span class="brand-mark" aria-hidden="true">VT</span> ${PRODUCT_NAME}</a>
          ${o.nav ?? ''}
        </header>
        <main id="main" tabindex="-1">
          <noscript
            ><p class="alert alert-error">
              The console needs JavaScript to talk to the API. Programmatic access with an API key works
              without it.
            </p></noscript
          >
          ${o.main}
        </main>
      </body>
    </html> `;
}

/** A labelled text input with its hint and an (initially hidden) error line, wired by ids for screen readers. */
export function field(o: {
  id: string;
  label: string;
  type?: string;
  autocomplete?: string;
  hint?: string;
  attrs?: SafeHtml;
}): SafeHtml {
  const describedBy = [o.hint ? `${o.id}-hint` : '', `${o.id}-error`].filter(Boolean).join(' ');
  return html`<div class="field">
    <label for="${o.id}">${o.label}</label>
    ${o.hint ? html`<p class="hint" id="${o.id}-hint">${o.hint}</p>` : ''}
    <input
      id="${o.id}"
      name="${o.id}"
      type="${o.type ?? 'text'}"
      autocomplete="${o.autocomplete ?? 'off'}"
      aria-describedby="${describedBy}"
      ${o.attrs ?? ''}
    />
    <p class="field-error" id="${o.id}-error" hidden></p>
  </div>`;
}

/**
 * A table the page's script fills in: `<name>-loading` shows until then, `<name>-empty` when
 * there is no row, else `<name>-wrap` with the rows in `<name>-body` (and totals in `<name>-foot`).
 */
export function dataTable(o: {
  name: string;
  /** What is loading, e.g. "Loading keys" (an ellipsis follows). */
  loading: string;
  /** The empty state's text; the script may write its own. */
  empty?: string;
  caption: string;
  /** The header row's cells. */
  columns: SafeHtml;
  foot?: boolean;
}): SafeHtml {
  return html`<p id="${o.name}-loading" class="loading" role="status">${o.loading}&hellip;</p>
    <p id="${o.name}-empty" class="empty" hidden>${o.empty ?? ''}</p>
    <div id="${o.name}-wrap" class="table-wrap" hidden>
      <table class="data stack-on-phone" id="${o.name}-table">
        <caption class="sr-only">
          ${o.caption}
        </caption>
        <thead>
          <tr>
            ${o.columns}
          </tr>
        </thead>
        <tbody id="${o.name}-body"></tbody>
        ${o.foot ? html`<tfoot id="${o.name}-foot"></tfoot>` : ''}
      </table>
    </div>`;
}
