/* global document */
import { h } from './console.js';

/**
 * A case's owner, tags and risk acceptance in the console (docs/console.md#cases):
 * the cells and chips both case pages draw, and the forms of `case-owner-fields.ts`. Every value
 * reaches the page as text (`h`), never as markup.
 */
const DAY = 86_400_000;
const isoDay = (ms) => new Date(ms).toISOString().slice(0, 10);

/** Shows the "accepted until" date while `select` chooses risk_accepted; the date stays within a year. */
export function wireAcceptance(select, input) {
  const field = document.getElementById(`${input.id}-field`);
  const now = Date.now();
  input.min = isoDay(now + DAY);
  input.max = isoDay(now + 364 * DAY);
  const sync = () => {
    const on = select.value === 'risk_accepted';
    field.hidden = !on;
    input.required = on;
    if (on && !input.value) input.value = isoDay(now + 90 * DAY);
  };
  select.addEventListener('change', sync);
  sync();
}

/** The end of the chosen day (UTC) as the API takes `expiresAt`, when accepting a risk. */
export function expiresAtOf(select, input) {
  return select.value === 'risk_accepted' && input.value ? `${input.value}T23:59:59Z` : undefined;
}

const tagsOf = (text) => [
  ...new Set(
    text
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((t) => t.toLowerCase()),
  ),
];

/**
 * The body of `POST /cases/owner` from an owner form (`prefix`), without the cases; null when it
 * asks for nothing.
 */
export function ownerBody(prefix) {
  const body = {};
  const assignee = document.getElementById(`${prefix}-assignee`).value.trim();
  if (document.getElementById(`${prefix}-unassign`).checked) body.assignee = null;
  else if (assignee) body.assignee = assignee;
  const add = tagsOf(document.getElementById(`${prefix}-add-tags`).value);
  const remove = tagsOf(document.getElementById(`${prefix}-remove-tags`).value);
  if (add.length) body.addTags = add;
  if (remove.length) body.removeTags = remove;
  return Object.keys(body).length ? body : null;
}

/** Empties an owner form after it was applied. */
export function resetOwnerForm(prefix) {
  for (const name of ['assignee', 'add-tags', 'remove-tags'])
    document.getElementById(`${prefix}-${name}`).value = '';
  document.getElementById(`${prefix}-unassign`).checked = false;
}

/** The case's tags as chips, or nothing. */
export function tagChips(c) {
  if (!c.tags || c.tags.length === 0) return null;
  return h('span', { class: 'tags' }, ...c.tags.map((t) => h('span', { class: 'tag' }, t)));
}

/** Who owns the case, or a muted dash. */
export function ownerText(c) {
  return c.assignee ? h('span', { class: 'owner' }, c.assignee) : h('span', { class: 'muted' }, '—');
}

/** A refused change as a sentence naming each field (`assignee must be the email of a member …`). */
export function refusal(err) {
  if (!err || !Array.isArray(err.errors) || err.errors.length === 0) return err;
  const text = err.errors
    .map((e) => `${e.path.replace(/^\//, '').replace(/\//g, ' ')} ${e.message}`)
    .join('; ');
  return new Error(`${text}.`);
}
