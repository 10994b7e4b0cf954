/* global document, window, navigator, location */
import { $, api, ApiError, handleSessionLoss, messageOf, show } from './console.js';

/**
 * The one-time reveal (docs/console.md#sign-up-and-api-keys). The key is asked for once, kept only in this
 * closure and in `#reveal-key`, never in storage; when the page is hidden (navigation,
 * reload, back/forward cache) it is wiped, so a restored page shows "already revealed".
 */
let secret = null;
const section = $('reveal');
const keyEl = $('reveal-key');
const copyStatus = $('copy-status');

function state(name) {
  for (const s of ['loading', 'shown', 'gone', 'error']) show($(`reveal-${s}`), s === name);
  section.setAttribute('aria-busy', String(name === 'loading'));
}

function wipe() {
  secret = null;
  keyEl.textContent = '';
  $('reveal-masked').textContent = '';
}

async function copy() {
  if (!secret) return;
  try {
    await navigator.clipboard.writeText(secret);
    copyStatus.textContent = 'Copied to the clipboard.';
  } catch {
    // Clipboard API refused (permissions, insecure origin): select the key for a manual copy.
    const range = document.createRange();
    range.selectNodeContents(keyEl);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    const ok = document.execCommand && document.execCommand('copy');
    copyStatus.textContent = ok
      ? 'Copied to the clipboard.'
      : 'The key is selected: press Ctrl+C (or ⌘C) to copy it.';
  }
}

async function reveal() {
  for (const el of document.querySelectorAll('.origin')) el.textContent = location.origin;
  const token = location.pathname.split('/')[2] || '';
  state('loading');
  try {
    const found = await api(`/reveal/${encodeURIComponent(token)}`);
    secret = found.key;
    keyEl.textContent = found.key;
    $('reveal-masked').textContent = `(${found.masked})`;
    state('shown');
    $('copy-key').focus();
  } catch (err) {
    if (handleSessionLoss(err)) return;
    if (err instanceof ApiError && err.code === 'reveal_expired') {
      state('gone');
      return;
    }
    $('reveal-error-text').textContent =
      err instanceof ApiError && err.code === 'not_found'
        ? 'This reveal link is not valid for your workspace. Keys are revealed only from the link made when they were created.'
        : messageOf(err);
    state('error');
  }
}

$('copy-key').addEventListener('click', () => void copy());
window.addEventListener('pagehide', wipe);
window.addEventListener('pageshow', (event) => {
  if (event.persisted) {
    wipe();
    state('gone');
  }
});
void reveal();
