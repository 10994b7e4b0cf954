/* global FormData, location */
import {
  $,
  api,
  ApiError,
  busy,
  clearAlert,
  formatDate,
  messageOf,
  show,
  showAlert,
  showFieldErrors,
} from './console.js';

/**
 * An invitation's page (docs/console.md#invitations): says who invites to what, then accepts as
 * the signed-in person (with the session's CSRF token) or with a password (a new account, or the
 * existing account's). The token stays in the path and is sent only to this origin.
 */
const token = location.pathname.split('/').pop();

async function signedIn() {
  try {
    return await api('/session');
  } catch {
    return null;
  }
}

async function main() {
  let invite;
  try {
    invite = await api(`/invitations/${encodeURIComponent(token)}`);
  } catch (err) {
    $('invite-summary').textContent = '';
    showAlert($('form-error'), messageOf(err));
    return;
  }
  const me = await signedIn();
  $('invite-summary').textContent =
    `${invite.invitedBy} invites ${invite.email} to the workspace “${invite.workspaceName}” as ${invite.role}. ` +
    `The invitation expires on ${formatDate(invite.expiresAt)}.`;
  const form = $('accept-form');
  if (me) show($('password-field'), false);
  else $('password').required = true;
  show(form);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearAlert($('form-error'));
    const data = new FormData(form);
    await busy(form, async () => {
      try {
        await api(`/invitations/${encodeURIComponent(token)}/accept`, {
          method: 'POST',
          body: me ? {} : { password: String(data.get('password') || '') },
          ...(me ? { csrf: me.csrfToken } : {}),
        });
        location.assign('/');
      } catch (err) {
        const rest = err instanceof ApiError ? showFieldErrors(form, err.errors) : [];
        showAlert($('form-error'), [messageOf(err), ...rest].join(' '));
      }
    });
  });
}

main();
