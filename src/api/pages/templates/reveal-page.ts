import { html, type SafeHtml } from '../html.js';
import { layout } from './layout.js';

/**
 * The one-time reveal page (docs/console.md#sign-up-and-api-keys). The shell carries no secret: its script asks
 * `GET /api/console/reveal/:token` once, writes the key into `#reveal-key`, and wipes it
 * again when the page is hidden. Every state (loading, shown, already revealed, invalid,
 * error) has its own block so the wording is reviewable here, not scattered in script.
 */
export function revealPage(): SafeHtml {
  return layout({
    title: 'Your new API key',
    script: 'reveal.js',
    bodyClass: 'reveal',
    nav: html`<nav aria-label="Console"><a href="/settings/api-keys">Settings &rsaquo; API keys</a></nav>`,
    main: html`<section class="card reveal-card" aria-labelledby="page-title" aria-busy="true" id="reveal">
      <h1 id="page-title">Your new API key</h1>
      <p id="reveal-loading" class="loading" role="status">Fetching your key&hellip;</p>

      <div id="reveal-shown" hidden>
        <div class="alert alert-warning" role="alert">
          <strong>Copy this key now. It will not be shown again.</strong>
          Once you leave or reload this page, only its masked form is available. If you lose it, rotate the
          key in Settings.
        </div>
        <p class="key-label" id="reveal-key-label">API key <span id="reveal-masked" class="muted"></span></p>
        <div class="key-box">
          <code id="reveal-key" class="key-value" aria-labelledby="reveal-key-label" tabindex="0"></code>
          <button id="copy-key" type="button" class="btn btn-primary">Copy key</button>
        </div>
        <p id="copy-status" class="copy-status" role="status" aria-live="polite"></p>
        <h2 class="h3">Use it</h2>
        <p>Send the key in the <code>X-API-Key</code> header. Check it with:</p>
        <pre
          class="snippet"
        ><code>curl -H "X-API-Key: $VULNTRIAGE_API_KEY" <span class="origin"></span>/api/v1/keys/me</code></pre>
        <p>
          <a class="btn" href="/settings/api-keys"
            >I have stored it &mdash; go to Settings &rsaquo; API keys</a
          >
        </p>
      </div>

      <div id="reveal-gone" hidden>
        <div class="alert alert-info" role="status">
          <strong>This key has already been revealed.</strong>
          For your security the full key is shown only once, and reveal links stop working after 15 minutes.
          Its masked form is listed in Settings. If you did not store it, rotate the key to get a new one.
        </div>
        <p><a class="btn btn-primary" href="/settings/api-keys">Go to Settings &rsaquo; API keys</a></p>
      </div>

      <div id="reveal-error" hidden>
        <div class="alert alert-error" role="alert" id="reveal-error-text"></div>
        <p><a class="btn" href="/settings/api-keys">Go to Settings &rsaquo; API keys</a></p>
      </div>
    </section>`,
  });
}
