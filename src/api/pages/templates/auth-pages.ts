import type { Config } from '../../../lib/config.js';
import { html, type SafeHtml } from '../html.js';
import { field, layout } from './layout.js';

const count = (n: number): string => n.toLocaleString('en-US');

/** Sign-up: the person, their workspace and its plan; the first key is revealed right after (docs/console.md#sign-up-and-api-keys). */
export function signupPage(config: Pick<Config, 'plans' | 'trialDays'>): SafeHtml {
  const { free, service } = config.plans;
  return layout({
    title: 'Sign up',
    script: 'signup.js',
    bodyClass: 'auth',
    main: html`<section class="card auth-card" aria-labelledby="page-title">
      <h1 id="page-title">Create your workspace</h1>
      <p class="lead">
        Your workspace owns its API keys, usage and billing. Its first key is shown once, on the next page.
      </p>
      <div id="form-error" class="alert alert-error" role="alert" tabindex="-1" hidden></div>
      <form id="signup-form" class="stack" method="post">
        ${field({ id: 'email', label: 'Work email', type: 'email', autocomplete: 'email', attrs: html`required maxlength="254"` })}
        ${field({ id: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', hint: 'At least 10 characters.', attrs: html`required minlength="10" maxlength="256"` })}
        ${field({ id: 'workspaceName', label: 'Workspace name', autocomplete: 'organization', hint: 'Usually your team or company.', attrs: html`required maxlength="120"` })}
        <fieldset class="field plan-choice" aria-describedby="plan-error">
          <legend>Plan</legend>
          <label class="choice">
            <input type="radio" name="plan" value="trial" checked />
            <span
              ><strong>${config.trialDays}-day trial</strong> of the service plan:
              ${count(service.aiCallsPerMonth)} AI calls a month, ${count(service.requestsPerMinute)} requests
              a minute per key. Falls back to Free by itself; no card needed.</span
            >
          </label>
          <label class="choice">
            <input type="radio" name="plan" value="free" />
            <span
              ><strong>Free</strong>: ${count(free.aiCallsPerMonth)} AI calls a month,
              ${count(free.requestsPerMinute)} requests a minute per key.</span
            >
          </label>
          <p class="field-error" id="plan-error" hidden></p>
        </fieldset>
        <button type="submit" class="btn btn-primary btn-block">Create workspace</button>
      </form>
      <p class="switch">Already have an account? <a href="/login">Sign in</a></p>
    </section>`,
  });
}

const NOTICES: Record<string, string> = {
  expired: 'Your session has ended. Sign in again to continue.',
  'signed-out': 'You have signed out.',
  'password-reset': 'Your password is set, and every session of the account has ended. Sign in with it.',
};

/** Sign-in; `notice` explains why the person landed here (session expired, signed out). */
export function loginPage(notice: string | undefined): SafeHtml {
  const text = notice && Object.hasOwn(NOTICES, notice) ? NOTICES[notice] : undefined;
  return layout({
    title: 'Sign in',
    script: 'login.js',
    bodyClass: 'auth',
    main: html`<section class="card auth-card" aria-labelledby="page-title">
      <h1 id="page-title">Sign in to your workspace</h1>
      ${text ? html`<div class="alert alert-info" role="status">${text}</div>` : ''}
      <div id="form-error" class="alert alert-error" role="alert" tabindex="-1" hidden></div>
      <form id="login-form" class="stack" method="post">
        ${field({ id: 'email', label: 'Email', type: 'email', autocomplete: 'username', attrs: html`required maxlength="254"` })}
        ${field({ id: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', attrs: html`required maxlength="256"` })}
        <button type="submit" class="btn btn-primary btn-block">Sign in</button>
      </form>
      <p class="switch"><a href="/forgot-password">Forgot your password?</a></p>
      <section class="sso-choice" aria-labelledby="sso-title">
        <h2 id="sso-title" class="h3">Sign in with SSO</h2>
        <div id="sso-error" class="alert alert-error" role="alert" tabindex="-1" hidden></div>
        <form id="sso-form" class="stack" method="post">
          ${field({ id: 'ssoWorkspace', label: 'Work address or workspace slug', autocomplete: 'email', hint: "Your work email (you@example.com) or your workspace's slug; your company's identity provider signs you in.", attrs: html`required maxlength="254"` })}
          <button type="submit" class="btn btn-block">Continue with SSO</button>
        </form>
      </section>
      <p class="switch">New here? <a href="/signup">Create a workspace</a></p>
    </section>`,
  });
}
