import { html, type SafeHtml } from '../html.js';

/**
 * The console's fields for a case's owner, tags and risk acceptance (docs/console.md#cases,
 * docs/cases.md#owner-and-tags), shared by the Cases page's bulk actions and the Case page;
 * `case-owner.js` wires them.
 */

/** "Accepted until": a date, shown while the status chosen in the same form is `risk_accepted`. */
export function acceptanceField(id: string): SafeHtml {
  return html`<div class="field" id="${id}-field" hidden>
    <label for="${id}"
      >Risk accepted until <span class="hint">(the case reopens then; a note is required)</span></label
    >
    <input id="${id}" name="expiresAt" type="date" />
  </div>`;
}

/** A form setting the owner of, and adding or removing tags on, one case or the chosen cases. */
export function ownerForm(prefix: string, submit: string): SafeHtml {
  return html`<form id="${prefix}-form" class="bulk-form owner-form" novalidate data-needs-role="member">
    <div class="field">
      <label for="${prefix}-assignee">Owner <span class="hint">(a member's email)</span></label>
      <input
        id="${prefix}-assignee"
        name="assignee"
        type="email"
        maxlength="254"
        autocomplete="off"
        placeholder="alice@example.com"
      />
      <label class="check"
        ><input type="checkbox" id="${prefix}-unassign" name="unassign" /> Remove the owner</label
      >
    </div>
    <div class="field">
      <label for="${prefix}-add-tags"
        >Add tags <span class="hint">(separated by spaces or commas)</span></label
      >
      <input id="${prefix}-add-tags" name="addTags" type="text" maxlength="700" autocomplete="off" />
    </div>
    <div class="field">
      <label for="${prefix}-remove-tags">Remove tags</label>
      <input id="${prefix}-remove-tags" name="removeTags" type="text" maxlength="700" autocomplete="off" />
    </div>
    <div class="filter-actions">
      <button type="submit" class="btn" id="${prefix}-submit">${submit}</button>
    </div>
  </form>`;
}
