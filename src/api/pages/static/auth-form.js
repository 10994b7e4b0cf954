/* global FormData */
import { api, ApiError, busy, clearAlert, messageOf, showAlert, showFieldErrors } from './console.js';

/** The email (trimmed) and password both forms send. */
export function credentials(data) {
  return { email: String(data.get('email') || '').trim(), password: String(data.get('password') || '') };
}

/**
 * Sign-up and sign-in: on submit, `body(data)` of the form's data goes to `POST <path>` of the
 * console API and `then(answer)` follows. A refusal marks the fields it names and says the rest in
 * `alertBox`; with `fieldsNote`, a refusal that names only fields says that note instead.
 */
export function authForm({ form, alertBox, path, body, then, fieldsNote }) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearAlert(alertBox);
    showFieldErrors(form, []);
    const sent = body(new FormData(form));
    await busy(form, async () => {
      try {
        then(await api(path, { method: 'POST', body: sent }));
      } catch (err) {
        const rest = err instanceof ApiError ? showFieldErrors(form, err.errors) : [];
        const onlyFields =
          fieldsNote && err instanceof ApiError && err.errors.length > 0 && rest.length === 0;
        showAlert(alertBox, onlyFields ? fieldsNote : [messageOf(err), ...rest].join(' '));
      }
    });
  });
}
