import type { FastifyHelmetOptions } from '@fastify/helmet';

/**
 * Helmet settings for the console pages. The CSP allows nothing but our own origin: no
 * inline script or style (every script is a static file under /assets/), no frames of
 * us anywhere (clickjacking on the reveal and revoke screens), no plugins, no <base>
 * rewriting, forms only to ourselves. `Referrer-Policy: no-referrer` keeps the one-time
 * reveal path out of any Referer header.
 *
 * `upgrade-insecure-requests` and HSTS are only sent when the console is served over
 * HTTPS (the same switch as the Secure cookie flag), so a plain-HTTP local install keeps
 * working.
 */
export function helmetOptions(https: boolean): FastifyHelmetOptions {
  return {
    global: true,
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'"],
        fontSrc: ["'self'"],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        ...(https ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    crossOriginEmbedderPolicy: false,
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    hsts: https ? { maxAge: 31_536_000, includeSubDomains: true } : false,
  };
}

/**
 * Every console page either shows key data or is a form; none may be kept by a browser
 * or proxy cache (docs/console.md#sign-up-and-api-keys: the reveal page is served `no-store`).
 */
export const NO_STORE = 'no-store';
