import { SLA_PRIORITIES } from '../../../domain/cases/sla-policy.js';
import { html, type SafeHtml } from '../html.js';
import { field } from './layout.js';
import { settingsLayout } from './settings-nav.js';

const label = (p: string): string => p[0] + p.slice(1).toLowerCase();
const days = (prefix: string, p: string, hint: string): SafeHtml =>
  field({
    id: `${prefix}-${p}`,
    label: label(p),
    type: 'number',
    hint,
    attrs: html`min="1" max="3650" step="1" inputmode="numeric"`,
  });

/**
 * Settings > SLA (docs/cases.md#due-dates-and-sla): days to fix by priority, tighter days for
 * exposed assets and the longest risk acceptance. `sla.js` reads and writes `/api/console/sla-policy`;
 * an empty days field is "no due date".
 */
export function slaPage(): SafeHtml {
  return settingsLayout({
    current: '/settings/sla',
    script: 'sla.js',
    notices: true,
    main: html`<section class="card" aria-labelledby="sla-title">
      <h2 id="sla-title">Days to fix</h2>
      <p class="hint">
        A case is due this many days after its first sighting, by its triage priority (its severity while
        untriaged); a CISA KEV due date wins when sooner. Leave a field empty for no due date. Saving
        recomputes the due dates of every case that is not resolved.
      </p>
      <form id="sla-form" class="stack" novalidate aria-busy="true">
        <fieldset>
          <legend>Every asset</legend>
          ${SLA_PRIORITIES.map((p) => days('days', p, `Days for ${label(p).toLowerCase()} cases.`))}
        </fieldset>
        <fieldset>
          <legend>Internet-exposed or high-criticality assets</legend>
          ${SLA_PRIORITIES.map((p) =>
            days('exposed', p, 'Tighter days; empty: the days above. The sooner of the two applies.'),
          )}
        </fieldset>
        ${field({
          id: 'maxAcceptanceDays',
          label: 'Longest risk acceptance (days)',
          type: 'number',
          hint: 'A risk acceptance expires at most this many days after it is made.',
          attrs: html`required min="1" max="3650" step="1" inputmode="numeric"`,
        })}
        <button type="submit" class="btn btn-primary">Save SLA policy</button>
      </form>
    </section>`,
  });
}
