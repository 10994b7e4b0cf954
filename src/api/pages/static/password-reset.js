/* global FormData, location */
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

/**
 * "Forgot your password?" and a reset link's page (docs/console.md#password-reset). Asking says
 * the same for every address; setting the password sends the person to sign in again.
 */
function submit(form, run) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearAlert($('form-error'));
    showFieldErrors(form, []);
    // Read before `busy` disables the fields (a disabled field is not in the form's data).
    const data = new FormData(form);
    await busy(form, async () => {
      try {
        await run(data);
      } catch (err) {
        const rest = err instanceof ApiError ? showFieldErrors(form, err.errors) : [];
        showAlert($('form-error'), [messageOf(err), ...rest].join(' '));
      }
    });
  });
}

const forgot = $('forgot-form');
if (forgot) {
  submit(forgot, async (data) => {
    await api('/password-reset', { method: 'POST', body: { email: String(data.get('email') || '').trim() } });
    show(forgot, false);
    show($('form-done'));
  });
}

const reset = $('reset-form');
if (reset) {
  const token = location.pathname.split('/').pop();
  submit(reset, async (data) => {
    await api(`/password-reset/${encodeURIComponent(token)}`, {
      method: 'POST',
      body: { password: String(data.get('password') || '') },
    });
    location.assign('/login?notice=password-reset');
  });
}
