/* global location, URLSearchParams */
import { $ } from './console.js';
import { authForm, credentials } from './auth-form.js';

/** Sign-in, then back to where the person was going (only to our own pages). */
const LOCAL_NEXT =
  /^\/(settings\/(api-keys|audit-log|workflows|single-sign-on)|reveal\/[A-Za-z0-9_-]{16,100}|scans|cases|cases\/[0-9a-f-]{36})?$/;

function destination() {
  const next = new URLSearchParams(location.search).get('next');
  return next && LOCAL_NEXT.test(next) ? next : '/settings/api-keys';
}

// `/login?sso=<slug>` (a refused switch names it, docs/console.md#sso-and-sessions) fills in the
// SSO form and puts the focus on its button.
const ssoSlug = new URLSearchParams(location.search).get('sso');
if (ssoSlug && /^[a-z0-9][a-z0-9-]{1,62}$/.test(ssoSlug)) {
  $('ssoWorkspace').value = ssoSlug;
  $('sso-form').querySelector('button[type="submit"]').focus();
}

// Single sign-on (docs/console.md#the-sign-in): an email finds the workspace by its domain, anything
// else is a slug; the answer is the identity provider's URL, where the browser goes next.
authForm({
  form: $('sso-form'),
  alertBox: $('sso-error'),
  path: '/sso/start',
  body: (data) => {
    const typed = String(data.get('ssoWorkspace') || '').trim();
    return typed.includes('@') ? { email: typed } : { workspace: typed.toLowerCase() };
  },
  then: (answer) => location.assign(answer.authorizationUrl),
});

authForm({
  form: $('login-form'),
  alertBox: $('form-error'),
  path: '/login',
  body: credentials,
  then: () => location.assign(destination()),
});
