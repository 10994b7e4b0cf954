import { html, type SafeHtml } from '../html.js';

/** The pages under Settings, in the order the navigation lists them. */
const SETTINGS_PAGES = [
  { path: '/settings/api-keys', label: 'API keys' },
  { path: '/settings/audit-log', label: 'Audit log' },
] as const;

export type SettingsPath = (typeof SETTINGS_PAGES)[number]['path'];

/**
 * The head of every Settings page: "Settings ›" as a real link (issue 12 item 8), the page
 * title, and the tabs between the Settings pages, the current one marked for screen readers.
 */
export function settingsHead(current: SettingsPath, title: string): SafeHtml {
  return html`<div class="page-head">
    <p class="crumbs"><a href="/settings">Settings</a> <span aria-hidden="true">&rsaquo;</span></p>
    <h1 id="page-title">${title}</h1>
    <nav class="settings-nav" aria-label="Settings">
      <ul>
        ${SETTINGS_PAGES.map(
          (p) =>
            html`<li>
              <a href="${p.path}" ${p.path === current ? html`aria-current="page"` : ''}>${p.label}</a>
            </li>`,
        )}
      </ul>
    </nav>
  </div>`;
}

/** The top bar's right-hand side on Settings pages: the workspace name and Log out. */
export function accountNav(): SafeHtml {
  return html`<nav class="topnav" aria-label="Account">
    <span id="nav-workspace" class="nav-workspace"></span>
    <button id="logout" type="button" class="btn btn-quiet">Log out</button>
  </nav>`;
}
