/* global FormData, location, URLSearchParams */
import { $, api, ApiError, busy, clearAlert, messageOf, showAlert, showFieldErrors } from './console.js';

/** Sign-in, then back to where the person was going (only to our own pages). */
const form = $('login-form');
const alertBox = $('form-error');
const LOCAL_NEXT =
  /^\/(settings\/(api-keys|audit-log|workflows)|reveal\/[A-Za-z0-9_-]{16,100}|scans|cases|cases\/[0-9a-f-]{36})?$/;

function destination() {
  const next = new URLSearchParams(location.search).get('next');
  return next && LOCAL_NEXT.test(next) ? next : '/settings/api-keys';
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  clearAlert(alertBox);
  showFieldErrors(form, []);
  const data = new FormData(form);
  const body = {
    email: String(data.get('email') || '').trim(),
    password: String(data.get('password') || ''),
  };
  await busy(form, async () => {
    try {
      await api('/login', { method: 'POST', body });
      location.assign(destination());
    } catch (err) {
      const rest = err instanceof ApiError ? showFieldErrors(form, err.errors) : [];
      showAlert(alertBox, [messageOf(err), ...rest].join(' '));
    }
  });
});
