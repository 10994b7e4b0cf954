/* global FormData, location */
import { $, api, ApiError, busy, clearAlert, messageOf, showAlert, showFieldErrors } from './console.js';

/** Sign-up: creates the workspace and goes straight to the first key's one-time reveal page. */
const form = $('signup-form');
const alertBox = $('form-error');

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  clearAlert(alertBox);
  showFieldErrors(form, []);
  const data = new FormData(form);
  const body = {
    email: String(data.get('email') || '').trim(),
    password: String(data.get('password') || ''),
    workspaceName: String(data.get('workspaceName') || '').trim(),
    plan: String(data.get('plan') || 'trial'),
  };
  await busy(form, async () => {
    try {
      const created = await api('/signup', { method: 'POST', body });
      location.assign(created.revealUrl);
    } catch (err) {
      const rest = err instanceof ApiError ? showFieldErrors(form, err.errors) : [];
      const fields = err instanceof ApiError && err.errors.length > 0 && rest.length === 0;
      showAlert(
        alertBox,
        fields ? 'Please correct the fields marked below.' : [messageOf(err), ...rest].join(' '),
      );
    }
  });
});
