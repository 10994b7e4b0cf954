/* global document, window, fetch, location */
/**
 * Shared helpers of the console pages: the JSON API client (CSRF header on every
 * state-changing call, problem documents turned into readable errors), DOM building
 * without innerHTML, and formatting. No framework, no build step, no third parties.
 *
 * Secrets rule: nothing here writes to localStorage, sessionStorage or cookies. The CSRF
 * token lives in this module's memory for the life of the page.
 */

/** An API error carrying the problem document (docs/api.md#errors). */
export class ApiError extends Error {
  constructor(status, problem) {
    super((problem && problem.detail) || `The service answered ${status}.`);
    this.status = status;
    this.code = (problem && problem.code) || 'unknown';
    this.errors = (problem && Array.isArray(problem.errors) && problem.errors) || [];
    this.requestId = (problem && problem.requestId) || null;
  }
}

let sessionPromise = null;

/** The current console session (`{userId, workspaceId, csrfToken, expiresAt}`), fetched once per page. */
/**
 * Marks the page with the member's role (docs/console.md#members-and-roles): console.css hides
 * every control marked `data-needs-role` above it, and every one until the role is known, so a
 * viewer never sees a button the API would refuse. The API still checks each call.
 */
function showForRole(me) {
  document.body.dataset.role = me.role;
  return me;
}

export function session() {
  if (!sessionPromise) {
    sessionPromise = api('/session')
      .then(showForRole)
      .catch((err) => {
        sessionPromise = null;
        throw err;
      });
  }
  return sessionPromise;
}

/**
 * Calls the console JSON API. Non-GET calls carry `X-CSRF-Token` from the session (or
 * `csrf` when given). Throws `ApiError` with the problem's detail, or a plain Error in
 * words when the service cannot be reached.
 */
export async function api(path, { method = 'GET', body, csrf } = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  // Public calls (no session to take a token from) send one only when given.
  const open = /^\/(signup|login|sso\/start|password-reset|invitations\/[^/]+\/accept)/.test(path);
  if (method !== 'GET' && (csrf || !open)) {
    headers['X-CSRF-Token'] = csrf || (await session()).csrfToken;
  }
  let res;
  try {
    res = await fetch(`/api/console${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new Error('The service could not be reached. Check your connection and try again.');
  }
  if (res.status === 204) return null;
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

/** Signed out or session ended: back to sign-in, returning here afterwards. */
export function toLogin() {
  const here = location.pathname;
  const next =
    /^\/(settings\/(api-keys|audit-log|workflows|single-sign-on)|reveal\/[A-Za-z0-9_-]+|scans|cases|cases\/[0-9a-f-]{36})?$/.test(
      here,
    )
      ? `&next=${here}`
      : '';
  location.assign(`/login?notice=expired${next}`);
}

/** True when the error means "no session": the caller should stop, we are navigating away. */
export function handleSessionLoss(err) {
  if (err instanceof ApiError && err.status === 401 && err.code === 'unauthenticated') {
    toLogin();
    return true;
  }
  return false;
}

/** `h('p', {class: 'x'}, 'text', child)`: elements from text only, never from HTML strings. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof window.Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export const $ = (id) => document.getElementById(id);

export function show(el, visible = true) {
  el.hidden = !visible;
}

/** Shows an error in words in an alert region and moves focus there so it is announced. */
export function showAlert(el, message) {
  el.textContent = message;
  el.hidden = false;
  el.focus({ preventScroll: false });
}

export function clearAlert(el) {
  el.textContent = '';
  el.hidden = true;
}

export function messageOf(err) {
  if (err instanceof ApiError) {
    if (err.code === 'rate_limited') return `${err.message} (too many attempts)`;
    return err.message;
  }
  return (err && err.message) || 'Something went wrong.';
}

/**
 * Puts a validation problem's field errors next to their inputs (`/email` → `#email-error`)
 * and marks the inputs invalid. Returns the messages that had no field to go to.
 */
export function showFieldErrors(form, errors) {
  for (const el of form.querySelectorAll('.field-error')) {
    el.hidden = true;
    el.textContent = '';
  }
  for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  const unplaced = [];
  let first = null;
  for (const e of errors) {
    const name = String(e.path || '').split('/')[1] || '';
    const slot = name ? document.getElementById(`${name}-error`) : null;
    if (!slot) {
      unplaced.push(`${e.path} ${e.message}`);
      continue;
    }
    slot.textContent = `${labelOf(name)} ${e.message}.`;
    slot.hidden = false;
    const input = document.getElementById(name) || form.querySelector(`[name="${name}"]`);
    if (input) {
      input.setAttribute('aria-invalid', 'true');
      first = first || input;
    }
  }
  if (first) first.focus();
  return unplaced;
}

function labelOf(name) {
  const label = document.querySelector(`label[for="${name}"]`);
  const legend =
    !label && document.getElementById(`${name}-error`)?.closest('fieldset')?.querySelector('legend');
  return ((label || legend)?.textContent || name).trim();
}

/** Disables a form's controls while a call is in flight, and marks the button busy. */
export async function busy(form, run) {
  const controls = [...form.querySelectorAll('button, input, select')];
  const was = controls.map((c) => c.disabled);
  controls.forEach((c) => (c.disabled = true));
  form.setAttribute('aria-busy', 'true');
  try {
    return await run();
  } finally {
    controls.forEach((c, i) => (c.disabled = was[i]));
    form.removeAttribute('aria-busy');
  }
}

const numberFormat = new Intl.NumberFormat('en-US');
export const count = (n) => numberFormat.format(Number(n) || 0);

/**
 * USD from the API's exact decimal string (micro-dollars). One rule for every amount on a
 * page, applied per table so a column never mixes precisions (docs/console.md#sign-up-and-api-keys): two decimals,
 * unless some non-zero amount of the table is below $0.01, then four decimals for the whole
 * table (one triage call costs a fraction of a cent, and "$0.00" would hide it).
 * `usdDigits(amounts)` picks the decimals; `usd(amount, digits)` formats with them.
 */
const usdFormats = new Map();
export function usdDigits(amounts) {
  return amounts.some((a) => {
    const n = Math.abs(Number(a) || 0);
    return n > 0 && n < 0.01;
  })
    ? 4
    : 2;
}
export function usd(decimal, digits = usdDigits([decimal])) {
  if (!usdFormats.has(digits)) {
    usdFormats.set(
      digits,
      new Intl.NumberFormat('en-US', {
        style: 'currency',
        currency: 'USD',
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
      }),
    );
  }
  return usdFormats.get(digits).format(Number(decimal) || 0);
}

const dateFormat = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  timeZone: 'UTC',
});
const shortDateTime = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  timeZone: 'UTC',
});
const fullDateTime = new Intl.DateTimeFormat('en-GB', {
  dateStyle: 'full',
  timeStyle: 'long',
  timeZone: 'UTC',
});

/** A `<time>` element (UTC, the full moment in its tooltip), or `fallback` text when there is no date. */
export function time(iso, fallback = '—', withTime = false) {
  if (!iso) return h('span', { class: 'muted' }, fallback);
  const d = new Date(iso);
  return h(
    'time',
    { datetime: iso, title: fullDateTime.format(d) },
    (withTime ? shortDateTime : dateFormat).format(d),
  );
}

export const formatDate = (iso) => dateFormat.format(new Date(iso));
