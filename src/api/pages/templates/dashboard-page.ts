import type { CaseDashboard } from '../../../domain/cases/case-store.js';
import type { RemediationStats } from '../../../domain/cases/remediation-stats.js';
import { html, type SafeHtml } from '../html.js';
import { layout } from './layout.js';
import { accountNav } from './settings-nav.js';

const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] as const;
const number = new Intl.NumberFormat('en-US');
const shortDay = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });

const title = (s: string): string => s[0] + s.slice(1).toLowerCase();

/**
 * New cases per day as a bar chart in SVG, drawn on the server: no script, no style attribute
 * (the CSP allows neither inline), colours from the stylesheet; a table of the same figures
 * follows for screen readers and for reading exact values.
 */
export function newCasesChart(days: { day: string; count: number }[]): SafeHtml {
  const width = 600;
  const height = 160;
  const pad = { top: 10, right: 8, bottom: 22, left: 30 };
  const max = Math.max(1, ...days.map((d) => d.count));
  const innerW = width - pad.left - pad.right;
  const innerH = height - pad.top - pad.bottom;
  const step = innerW / Math.max(1, days.length);
  const barW = Math.max(2, step * 0.7);
  const y = (n: number): number => pad.top + innerH - (n / max) * innerH;
  const labelEvery = Math.ceil(days.length / 6);
  return html`<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="chart-title">
    <title id="chart-title">New cases per day, last ${days.length} days (most in one day: ${max})</title>
    <line
      class="axis"
      x1="${pad.left}"
      y1="${pad.top + innerH}"
      x2="${width - pad.right}"
      y2="${pad.top + innerH}"
    />
    <text class="tick" x="${pad.left - 4}" y="${pad.top + 8}" text-anchor="end">${max}</text>
    <text class="tick" x="${pad.left - 4}" y="${pad.top + innerH}" text-anchor="end">0</text>
    ${days.map((d, i) => {
      const x = pad.left + i * step + (step - barW) / 2;
      const top = y(d.count);
      return html`<rect
          class="bar"
          x="${x.toFixed(1)}"
          y="${top.toFixed(1)}"
          width="${barW.toFixed(1)}"
          height="${(pad.top + innerH - top).toFixed(1)}"
          ><title>${d.day}: ${d.count}</title></rect
        >${
          i % labelEvery === 0
            ? html`<text class="tick" x="${(x + barW / 2).toFixed(1)}" y="${height - 6}" text-anchor="middle"
                >${shortDay.format(new Date(`${d.day}T00:00:00Z`))}</text
              >`
            : ''
        }`;
    })}
  </svg>`;
}

const oneDecimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });
const meanDays = (n: number | null): string => (n === null ? '–' : oneDecimal.format(n));

/**
 * Due dates and remediation (docs/cases.md#due-dates-and-sla): open cases past due, SLA
 * compliance, cases resolved by rescans, and mean time to remediate by severity over 30 and 90 days.
 */
export function remediationCard(r: RemediationStats): SafeHtml {
  const rate = r.slaCompliance.rate === null ? '–' : `${oneDecimal.format(r.slaCompliance.rate * 100)}%`;
  return html`<section class="card" aria-labelledby="remediation-title">
    <h2 id="remediation-title">Due dates and remediation</h2>
    <dl class="stats tiles" id="remediation">
      <div class="tile">
        <dt>Open past due</dt>
        <dd><a href="/cases?sla=breached" id="past-due">${number.format(r.pastDue)}</a></dd>
      </div>
      <div class="tile">
        <dt>SLA met, last 90 days</dt>
        <dd id="sla-compliance">${rate}</dd>
      </div>
      <div class="tile">
        <dt>Resolved by rescans, last 30 days</dt>
        <dd id="resolved-by-rescans">${number.format(r.resolvedByRescans.days30)}</dd>
      </div>
    </dl>
    <p class="hint">
      ${number.format(r.slaCompliance.met)} resolved by their due date,
      ${number.format(r.slaCompliance.missed)} after it in the last 90 days;
      ${number.format(r.resolvedByRescans.days90)} resolved by rescans in the last 90 days.
    </p>
    <div class="table-wrap">
      <table class="data" id="mttr-table">
        <caption>
          Mean days to remediate (first sighting to resolution)
        </caption>
        <thead>
          <tr>
            <th scope="col">Severity</th>
            <th scope="col" class="num">Last 30 days</th>
            <th scope="col" class="num">Last 90 days</th>
          </tr>
        </thead>
        <tbody>
          ${SEVERITIES.map(
            (s) =>
              html`<tr>
                <th scope="row">${title(s)}</th>
                <td class="num">${meanDays(r.meanDaysToRemediate.days30[s])}</td>
                <td class="num">${meanDays(r.meanDaysToRemediate.days90[s])}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}

/** The landing page after sign-in (docs/console.md#dashboard): open cases by triage priority, KEV cases open, new cases per day, AI calls this month. */
export function dashboardPage(d: CaseDashboard & { aiCallsThisMonth: number }): SafeHtml {
  const totalNew = d.newPerDay.reduce((n, x) => n + x.count, 0);
  return layout({
    title: 'Dashboard',
    script: 'dashboard.js',
    bodyClass: 'data-page',
    nav: accountNav('Dashboard'),
    main: html`<div class="page-head"><h1 id="page-title">Dashboard</h1></div>
      <div id="page-error" class="alert alert-error" role="alert" tabindex="-1" hidden></div>
      <section class="card" aria-labelledby="open-title">
        <h2 id="open-title">Open cases</h2>
        <dl class="stats tiles" id="open-cases">
          <div class="tile">
            <dt>Open in total</dt>
            <dd>
              <a href="/cases?status=open,in_progress" id="open-total">${number.format(d.open.total)}</a>
            </dd>
          </div>
          <div class="tile tile-kev">
            <dt>In CISA KEV</dt>
            <dd>
              <a href="/cases?status=open,in_progress&amp;kev=true" id="kev-open"
                >${number.format(d.kevOpen)}</a
              >
            </dd>
          </div>
          ${SEVERITIES.map(
            (s) =>
              html`<div class="tile sev-${s.toLowerCase()}">
                <dt>${title(s)}</dt>
                <dd>
                  <a href="/cases?status=open,in_progress&amp;severity=${s}" data-severity="${s}"
                    >${number.format(d.open.bySeverity[s] ?? 0)}</a
                  >
                </dd>
              </div>`,
          )}
          <div class="tile">
            <dt>AI calls this month</dt>
            <dd>
              <a href="/settings/api-keys#statement-title" id="ai-calls"
                >${number.format(d.aiCallsThisMonth)}</a
              >
            </dd>
          </div>
        </dl>
        <p class="hint">
          Open cases by scanner severity:
          ${SEVERITIES.map((s) => html`${title(s)} ${number.format(d.open.bySeverity[s] ?? 0)}${s === 'INFO' ? '' : ' · '}`)}
        </p>
      </section>
      ${remediationCard(d.remediation)}
      <section class="card" aria-labelledby="new-title">
        <h2 id="new-title">New cases per day</h2>
        <p class="hint">${number.format(totalNew)} new cases in the last ${d.newPerDay.length} days (UTC).</p>
        ${newCasesChart(d.newPerDay)}
        <details>
          <summary>The figures as a table</summary>
          <div class="table-wrap">
            <table class="data" id="new-cases-table">
              <thead>
                <tr>
                  <th scope="col">Day (UTC)</th>
                  <th scope="col" class="num">New cases</th>
                </tr>
              </thead>
              <tbody>
                ${d.newPerDay.map(
                  (x) =>
                    html`<tr>
                      <th scope="row">${x.day}</th>
                      <td class="num">${x.count}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>
        </details>
      </section>`,
  });
}
