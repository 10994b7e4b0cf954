/* global location */
import { $ } from './console.js';
import { authForm, credentials } from './auth-form.js';

/** Sign-up: creates the workspace and goes straight to the first key's one-time reveal page. */
authForm({
  form: $('signup-form'),
  alertBox: $('form-error'),
  path: '/signup',
  body: (data) => ({
    ...credentials(data),
    workspaceName: String(data.get('workspaceName') || '').trim(),
    plan: String(data.get('plan') || 'trial'),
  }),
  then: (created) => location.assign(created.revealUrl),
  fieldsNote: 'Please correct the fields marked below.',
});
