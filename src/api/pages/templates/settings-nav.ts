import { html, type SafeHtml } from '../html.js';
import { layout } from './layout.js';

/** The pages under Settings, in the order the navigation lists them. */
const SETTINGS_PAGES = [
  { path: '/settings/api-keys', label: 'API keys' },
  { path: '/settings/members', label: 'Members' },
  { path: '/settings/audit-log', label: 'Audit log', role: 'admin' },
  { path: '/settings/workflows', label: 'Workflows' },
  { path: '/settings/single-sign-on', label: 'Single sign-on', role: 'admin' },
  { path: '/settings/data', label: 'Data' },
  { path: '/settings/sla', label: 'SLA', role: 'admin' },
] as const satisfies readonly { path: string; label: string; role?: 'admin' }[];

export type SettingsPath = (typeof SETTINGS_PAGES)[number]['path'];

/**
 * The head of every Settings page: "Settings ›" as a real link (docs/console.md#sign-up-and-api-keys), the page
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
            html`<li ${'role' in p ? html`data-needs-role="${p.role}"` : ''}>
              <a href="${p.path}" ${p.path === current ? html`aria-current="page"` : ''}>${p.label}</a>
            </li>`,
        )}
      </ul>
    </nav>
  </div>`;
}

/**
 * A Settings page: the console's layout around the Settings head and tabs and the page's alert
 * (`page-error`; `page-notice` too where the page reports successes), then the page's own `main`.
 */
export function settingsLayout(o: {
  current: SettingsPath;
  /** Module under /assets/ that drives the page. */
  script: string;
  notices?: boolean;
  main: SafeHtml;
}): SafeHtml {
  const title = SETTINGS_PAGES.find((p) => p.path === o.current)!.label;
  return layout({
    title: `Settings › ${title}`,
    script: o.script,
    bodyClass: 'settings',
    nav: accountNav(),
    main: html`${settingsHead(o.current, title)}
      <div id="page-error" class="alert alert-error" role="alert" tabindex="-1" hidden></div>
      ${o.notices ? html`<div id="page-notice" class="alert alert-success" role="status" hidden></div>` : ''}
      ${o.main}`,
  });
}

/** The console's sections, in the order the top bar lists them. */
const SECTIONS = [
  { path: '/', label: 'Dashboard' },
  { path: '/scans', label: 'Scans' },
  { path: '/cases', label: 'Cases' },
  { path: '/settings/api-keys', label: 'Settings' },
] as const;

export type Section = (typeof SECTIONS)[number]['label'];

/**
 * The top bar's right-hand side on signed-in pages: the sections (the current one marked for
 * screen readers), the workspace name and Log out.
 */
export function accountNav(current: Section = 'Settings'): SafeHtml {
  return html`<nav class="topnav" aria-label="Account">
    <ul class="sections">
      ${SECTIONS.map(
        (s) =>
          html`<li>
            <a href="${s.path}" ${s.label === current ? html`aria-current="page"` : ''}>${s.label}</a>
          </li>`,
      )}
    </ul>
    <span id="nav-workspace" class="nav-workspace"></span>
    <button id="logout" type="button" class="btn btn-quiet">Log out</button>
  </nav>`;
}
