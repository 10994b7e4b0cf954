import { html, type SafeHtml } from '../html.js';
import { dataTable, field, layout } from './layout.js';
import { settingsLayout } from './settings-nav.js';

/**
 * Settings > Members (docs/console.md#invitations): the members with their roles (change, remove),
 * the invite form whose answer shows the link once, the open invitations with revoke, and the
 * switcher between the person's workspaces. `members.js` draws the lists from the console API and
 * offers only what the person's role allows (the API refuses the rest anyway).
 */
export function membersPage(): SafeHtml {
  return settingsLayout({
    current: '/settings/members',
    script: 'members.js',
    notices: true,
    main: html`<section class="card" aria-labelledby="ws-title">
        <h2 id="ws-title">Your workspaces</h2>
        <form id="switch-form" class="inline-form">
          <label for="switch-workspace">Workspace</label>
          <select id="switch-workspace" name="workspaceId"></select>
          <button type="submit" class="btn">Switch</button>
        </form>
      </section>
      <section class="card" id="members-card" aria-labelledby="members-title" aria-busy="true">
        <h2 id="members-title">Members</h2>
        ${dataTable({
          name: 'members',
          loading: 'Loading members',
          caption: 'Members of this workspace',
          columns: html`<th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Joined</th>
            <th scope="col"><span class="sr-only">Actions</span></th>`,
        })}
      </section>
      <section class="card" id="invite-card" aria-labelledby="invite-title" hidden>
        <h2 id="invite-title">Invite a person</h2>
        <form id="invite-form" class="stack" method="post">
          ${field({ id: 'email', label: 'Email', type: 'email', attrs: html`required maxlength="254"` })}
          <div class="field">
            <label for="role">Role</label>
            <select id="role" name="role">
              <option value="viewer">Viewer: reads scans, cases, exports and usage</option>
              <option value="member" selected>Member: also changes cases, uploads and triages</option>
              <option value="admin">Admin: also manages keys, workflows and members</option>
              <option value="owner">Owner: also the plan and ownership</option>
            </select>
          </div>
          <button type="submit" class="btn btn-primary">Invite</button>
        </form>
        <div id="invite-link" class="alert alert-info" role="status" hidden>
          <p>Copy this link now and send it to the person: it is shown once, works once, for 7 days.</p>
          <p><code id="invite-url" class="break"></code></p>
        </div>
        <h3 class="h3">Open invitations</h3>
        ${dataTable({
          name: 'invitations',
          loading: 'Loading invitations',
          empty: 'No open invitations.',
          caption: 'Invitations not yet accepted',
          columns: html`<th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Expires</th>
            <th scope="col"><span class="sr-only">Actions</span></th>`,
        })}
      </section>`,
  });
}

/** An invitation's page (docs/console.md#invitations): who invites, to what; accept with a password or the session. */
export function invitationPage(): SafeHtml {
  return layout({
    title: 'Invitation',
    script: 'invitation.js',
    bodyClass: 'auth',
    main: html`<section class="card auth-card" aria-labelledby="page-title">
      <h1 id="page-title">Join a workspace</h1>
      <p id="invite-summary" class="lead">Loading the invitation…</p>
      <div id="form-error" class="alert alert-error" role="alert" tabindex="-1" hidden></div>
      <form id="accept-form" class="stack" method="post" hidden>
        <div id="password-field">
          ${field({ id: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', hint: 'At least 10 characters. With an account already, its password.', attrs: html`minlength="10" maxlength="256"` })}
        </div>
        <button type="submit" class="btn btn-primary btn-block">Accept the invitation</button>
      </form>
    </section>`,
  });
}

/** "Forgot your password?" (docs/console.md#password-reset): the same answer for every address. */
export function forgotPasswordPage(): SafeHtml {
  return layout({
    title: 'Reset your password',
    script: 'password-reset.js',
    bodyClass: 'auth',
    main: html`<section class="card auth-card" aria-labelledby="page-title">
      <h1 id="page-title">Reset your password</h1>
      <div id="form-error" class="alert alert-error" role="alert" tabindex="-1" hidden></div>
      <div id="form-done" class="alert alert-success" role="status" hidden>
        If this address has an account, a link to set a new password is on its way. It works once, for 30
        minutes.
      </div>
      <form id="forgot-form" class="stack" method="post">
        ${field({ id: 'email', label: 'Email', type: 'email', autocomplete: 'username', attrs: html`required maxlength="254"` })}
        <button type="submit" class="btn btn-primary btn-block">Email me a link</button>
      </form>
      <p class="switch"><a href="/login">Back to sign-in</a></p>
    </section>`,
  });
}

/** A reset link's page: choose the new password (every session of the account ends). */
export function resetPasswordPage(): SafeHtml {
  return layout({
    title: 'Choose a new password',
    script: 'password-reset.js',
    bodyClass: 'auth',
    main: html`<section class="card auth-card" aria-labelledby="page-title">
      <h1 id="page-title">Choose a new password</h1>
      <div id="form-error" class="alert alert-error" role="alert" tabindex="-1" hidden></div>
      <form id="reset-form" class="stack" method="post">
        ${field({ id: 'password', label: 'New password', type: 'password', autocomplete: 'new-password', hint: 'At least 10 characters. Every session of the account ends.', attrs: html`required minlength="10" maxlength="256"` })}
        <button type="submit" class="btn btn-primary btn-block">Set the password</button>
      </form>
    </section>`,
  });
}
