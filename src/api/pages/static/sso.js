/* global FormData */
import {
  $,
  api,
  ApiError,
  busy,
  clearAlert,
  messageOf,
  show,
  showAlert,
  showFieldErrors,
} from './console.js';
import { report, startShell } from './shell.js';

/**
 * Settings > Single sign-on (docs/console.md#single-sign-on): reads `GET /api/console/sso` into
 * the form and saves it with `PUT`. The client secret field stays empty: the page only learns
 * whether a secret is stored (`clientSecretSet`), and leaving the field blank keeps it.
 */
const form = $('sso-form');
const notice = $('page-notice');

function notify(text) {
  notice.textContent = text;
  show(notice, true);
}

/** `group = role` lines to an object; a line without `=` is kept whole so the API names it. */
function parseGroupRoles(text) {
  const out = {};
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const at = trimmed.lastIndexOf('=');
    if (at < 0) out[trimmed] = '';
    else
      out[trimmed.slice(0, at).trim()] = trimmed
        .slice(at + 1)
        .trim()
        .toLowerCase();
  }
  return out;
}

function fill(s) {
  $('redirect-uri').textContent = s.redirectUri;
  $('slug').value = s.slug ?? '';
  $('issuer').value = s.issuer ?? '';
  $('clientId').value = s.clientId ?? '';
  $('clientSecret').value = '';
  $('clientSecret').placeholder = s.clientSecretSet ? 'A secret is stored' : '';
  $('emailDomains').value = s.emailDomains.join(', ');
  $('enabled').checked = s.enabled;
  $('autoJoin').checked = s.autoJoin;
  $('defaultRole').value = s.defaultRole;
  $('groupsClaim').value = s.groupsClaim;
  $('groupRoles').value = Object.entries(s.groupRoles)
    .map(([g, r]) => `${g} = ${r}`)
    .join('\n');
  $('ssoRequired').checked = s.ssoRequired;
}

function bodyOf(data) {
  const body = {
    slug: String(data.get('slug') || '').trim(),
    issuer: String(data.get('issuer') || '').trim(),
    clientId: String(data.get('clientId') || '').trim(),
    enabled: $('enabled').checked,
    ssoRequired: $('ssoRequired').checked,
    emailDomains: String(data.get('emailDomains') || '')
      .split(/[\s,]+/)
      .map((d) => d.trim().toLowerCase())
      .filter(Boolean),
    autoJoin: $('autoJoin').checked,
    defaultRole: String(data.get('defaultRole') || 'member'),
    groupsClaim: String(data.get('groupsClaim') || '').trim(),
    groupRoles: parseGroupRoles(String(data.get('groupRoles') || '')),
  };
  const secret = String(data.get('clientSecret') || '');
  if (secret !== '') body.clientSecret = secret;
  return body;
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  clearAlert($('page-error'));
  show(notice, false);
  showFieldErrors(form, []);
  const body = bodyOf(new FormData(form));
  await busy(form, async () => {
    try {
      fill(await api('/sso', { method: 'PUT', body }));
      notify('Single sign-on saved.');
    } catch (err) {
      if (err instanceof ApiError && err.errors.length > 0) {
        const rest = showFieldErrors(form, err.errors);
        if (rest.length > 0) showAlert($('page-error'), [messageOf(err), ...rest].join(' '));
        return;
      }
      report(err);
    }
  });
});

async function start() {
  if (!(await startShell())) return;
  try {
    fill(await api('/sso'));
  } catch (err) {
    report(err);
  } finally {
    form.removeAttribute('aria-busy');
  }
}

void start();
