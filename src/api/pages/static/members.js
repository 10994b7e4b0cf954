/* global FormData, location */
import { $, api, clearAlert, formatDate, h, show, showAlert } from './console.js';
import { report, startShell } from './shell.js';

/**
 * Settings > Members (docs/console.md#invitations): members with role changes and removal,
 * the invite form (its link shown once), open invitations with revoke, the workspace switcher.
 * Names and addresses are written as text, never as markup.
 */
const ROLES = ['viewer', 'member', 'admin', 'owner'];
const RANK = Object.fromEntries(ROLES.map((r, i) => [r, i]));
const notice = () => $('page-notice');

function fill(name, rows) {
  show($(`${name}-loading`), false);
  $(`${name}-body`).replaceChildren(...rows);
  show($(`${name}-wrap`), rows.length > 0);
  show($(`${name}-empty`), rows.length === 0);
}

async function loadMembers(me) {
  const { data } = await api('/members');
  const admin = RANK[me.role] >= RANK.admin;
  fill(
    'members',
    data.map((m) => {
      const self = m.userId === me.userId;
      const canEdit = admin && (me.role === 'owner' || m.role !== 'owner');
      const role = canEdit
        ? h(
            'select',
            { 'aria-label': `Role of ${m.email}`, 'data-user': m.userId },
            ...ROLES.filter((r) => me.role === 'owner' || r !== 'owner').map((r) =>
              h('option', { value: r, ...(r === m.role ? { selected: '' } : {}) }, r),
            ),
          )
        : h('span', {}, m.role);
      if (canEdit)
        role.addEventListener('change', () =>
          act(
            me,
            () => api(`/members/${m.userId}`, { method: 'PATCH', body: { role: role.value } }),
            `${m.email} is now ${role.value}.`,
          ),
        );
      const actions = [];
      if (self || canEdit) {
        const remove = h('button', { type: 'button', class: 'btn btn-quiet' }, self ? 'Leave' : 'Remove');
        remove.addEventListener('click', () =>
          act(
            me,
            () => api(`/members/${m.userId}`, { method: 'DELETE' }),
            self ? 'You left the workspace.' : `${m.email} was removed.`,
            self,
          ),
        );
        actions.push(remove);
      }
      if (me.role === 'owner' && !self) {
        const hand = h('button', { type: 'button', class: 'btn btn-quiet' }, 'Make owner, step down');
        hand.addEventListener('click', () =>
          act(
            me,
            () => api('/ownership', { method: 'POST', body: { userId: m.userId } }),
            `${m.email} now owns the workspace.`,
            true,
          ),
        );
        actions.push(hand);
      }
      return h(
        'tr',
        {},
        h('td', { 'data-label': 'Email' }, m.email),
        h('td', { 'data-label': 'Role' }, role),
        h('td', { 'data-label': 'Joined' }, formatDate(m.joinedAt)),
        h('td', {}, ...actions),
      );
    }),
  );
  $('members-card').setAttribute('aria-busy', 'false');
}

async function loadInvitations(me) {
  const { data } = await api('/invitations');
  fill(
    'invitations',
    data.map((i) => {
      const revoke = h('button', { type: 'button', class: 'btn btn-quiet' }, 'Revoke');
      revoke.addEventListener('click', () =>
        act(
          me,
          () => api(`/invitations/${i.id}`, { method: 'DELETE' }),
          `The invitation of ${i.email} was revoked.`,
        ),
      );
      return h(
        'tr',
        {},
        h('td', { 'data-label': 'Email' }, i.email),
        h('td', { 'data-label': 'Role' }, i.role),
        h('td', { 'data-label': 'Expires' }, formatDate(i.expiresAt)),
        h('td', {}, revoke),
      );
    }),
  );
}

/** Runs a change, says so, and redraws (or reloads, when the change is about the person). */
async function act(me, run, done, reload = false) {
  clearAlert($('page-error'));
  try {
    await run();
    if (reload) return location.assign('/settings/members');
    showAlert(notice(), done);
    await refresh(me);
  } catch (err) {
    report(err);
  }
}

async function refresh(me) {
  await loadMembers(me);
  if (RANK[me.role] >= RANK.admin) await loadInvitations(me);
}

async function loadWorkspaces() {
  const { data } = await api('/workspaces');
  $('switch-workspace').replaceChildren(
    ...data.map((w) =>
      h('option', { value: w.id, ...(w.current ? { selected: '' } : {}) }, `${w.name} (${w.role})`),
    ),
  );
  $('switch-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await api('/workspace', { method: 'POST', body: { workspaceId: $('switch-workspace').value } });
      location.assign('/');
    } catch (err) {
      report(err);
      // A workspace that wants its own sign-in names where (docs/console.md#sso-and-sessions): link it.
      const where = /\/login\?sso=[a-z0-9-]+/.exec(err.message);
      if ((err.code === 'sso_required' || err.code === 'sign_in_required') && where) {
        $('page-error').append(' ', h('a', { href: where[0] }, 'Sign in with SSO'));
      }
    }
  });
}

async function main() {
  const me = await startShell();
  if (!me) return;
  try {
    await Promise.all([refresh(me), loadWorkspaces()]);
  } catch (err) {
    report(err);
  }
  if (RANK[me.role] < RANK.admin) return;
  show($('invite-card'));
  if (me.role !== 'owner') $('role').querySelector('option[value="owner"]').remove();
  $('invite-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    clearAlert($('page-error'));
    const data = new FormData(event.target);
    try {
      const created = await api('/invitations', {
        method: 'POST',
        body: { email: String(data.get('email') || '').trim(), role: String(data.get('role')) },
      });
      $('invite-url').textContent = created.invitationUrl;
      show($('invite-link'));
      showAlert(
        notice(),
        created.emailed ? `Invitation emailed to ${created.email}.` : `Invitation made for ${created.email}.`,
      );
      event.target.reset();
      await loadInvitations(me);
    } catch (err) {
      report(err);
    }
  });
}

main();
