import { SSO_ROLES } from '../../../domain/workspaces/sso/sso-roles.js';
import { html, type SafeHtml } from '../html.js';
import { field } from './layout.js';
import { settingsLayout } from './settings-nav.js';

function check(id: string, label: string, hint: string): SafeHtml {
  return html`<div class="field">
    <label class="check"
      ><input type="checkbox" id="${id}" name="${id}" aria-describedby="${id}-hint" /> ${label}</label
    >
    <p class="hint" id="${id}-hint">${hint}</p>
    <p class="field-error" id="${id}-error" hidden></p>
  </div>`;
}

/**
 * Settings > Single sign-on (docs/console.md#single-sign-on): the workspace's OpenID Connect
 * provider, auto-join and group roles, and "SSO required". `sso.js` reads and writes
 * `/api/console/sso`; the client secret is a write-only field (the page only learns whether one
 * is stored).
 */
export function ssoPage(): SafeHtml {
  return settingsLayout({
    current: '/settings/single-sign-on',
    script: 'sso.js',
    notices: true,
    main: html`<section class="card" aria-labelledby="sso-title">
      <h2 id="sso-title">OpenID Connect provider</h2>
      <p class="hint">
        Register this redirect URI at your provider (Okta, Entra ID, Google, Keycloak):
        <code id="redirect-uri" class="break">…</code>
      </p>
      <form id="sso-form" class="stack" novalidate aria-busy="true">
        ${field({ id: 'slug', label: 'Workspace slug', hint: 'What people type under "Sign in with SSO": lower-case letters, digits and dashes.', attrs: html`required maxlength="63"` })}
        ${field({ id: 'issuer', label: 'Issuer URL', type: 'url', hint: 'For example https://login.example.com/realms/acme. Its discovery document is checked when you save.', attrs: html`required maxlength="2048"` })}
        ${field({ id: 'clientId', label: 'Client ID', attrs: html`required maxlength="512"` })}
        ${field({ id: 'clientSecret', label: 'Client secret', type: 'password', autocomplete: 'new-password', hint: 'Stored sealed and never shown again. Leave blank to keep the stored one.', attrs: html`maxlength="1024"` })}
        ${field({ id: 'emailDomains', label: 'Email domains', hint: 'Comma-separated, e.g. example.com. People may type their email instead of the slug.', attrs: html`maxlength="2000"` })}
        ${check('enabled', 'Enable single sign-on', 'Shows this provider to people who sign in with SSO.')}
        ${check('autoJoin', 'Auto-join', 'A person of these email domains who is not a member joins at their first SSO sign-in.')}
        <div class="field">
          <label for="defaultRole">Default role of people who join</label>
          <select id="defaultRole" name="defaultRole">
            ${SSO_ROLES.map((r) => html`<option value="${r}">${r[0]!.toUpperCase() + r.slice(1)}</option>`)}
          </select>
          <p class="field-error" id="defaultRole-error" hidden></p>
        </div>
        ${field({ id: 'groupsClaim', label: 'Groups claim', hint: 'The ID token claim that lists the groups (usually groups).', attrs: html`required maxlength="100"` })}
        <div class="field">
          <label for="groupRoles">Group roles</label>
          <p class="hint" id="groupRoles-hint">
            One per line: group = admin, member or viewer. The highest role of a person's groups applies at
            each sign-in; owners keep theirs.
          </p>
          <textarea
            id="groupRoles"
            name="groupRoles"
            rows="4"
            aria-describedby="groupRoles-hint groupRoles-error"
          ></textarea>
          <p class="field-error" id="groupRoles-error" hidden></p>
        </div>
        ${check('ssoRequired', 'Require single sign-on', 'Members can no longer sign in with a password, and their password sessions end on saving. Owners keep theirs, to get back in if the provider fails.')}
        <button type="submit" class="btn btn-primary">Save single sign-on</button>
      </form>
    </section>`,
  });
}
