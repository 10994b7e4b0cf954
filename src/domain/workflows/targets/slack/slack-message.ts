import type { DeliveryCase, WorkflowEvent } from '../../types.js';

/** Slack's limit on a header block's text: the mapped summary is rendered within it. */
export const SLACK_HEADER_MAX = 150;

/** What the event says happened. */
const HEADLINES: Record<WorkflowEvent, string> = {
  'case.created': 'New case',
  'case.updated': 'Case updated',
  'case.triaged': 'Case triaged',
  'case.status_changed': 'Case status changed',
  'case.sla_breached': 'Case past its due date',
  'workflow.test': 'Test message',
};

/** Slack's mrkdwn treats `&`, `<` and `>` as control characters; everything else is literal. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * One Block Kit message for one case event: a header with the mapped summary (`title`), what
 * happened, the case's facts (priority, severity, status, asset, the KEV due date when CISA set
 * one) and a button to the case's console page. `text` is the fallback Slack shows in
 * notifications and wherever blocks cannot be drawn. Without a case (`workflow.test`) the message
 * says only that the workflow reaches the channel.
 */
export function slackMessage(event: WorkflowEvent, c: DeliveryCase | null, title: string) {
  const headline = HEADLINES[event];
  if (!c) {
    const text = `${headline} from vuln-triage: this workflow reaches the channel.`;
    return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: escapeMrkdwn(text) } }] };
  }
  const facts: [string, string][] = [
    ['Priority', c.priority ?? 'untriaged'],
    ['Severity', c.severity],
    ['Status', c.status.replace(/_/g, ' ')],
    ['Asset', c.asset ?? c.host ?? c.component ?? 'unknown'],
  ];
  if (c.kevDueDate) facts.push(['Due', `${c.kevDueDate} (CISA KEV)`]);
  return {
    text: `${headline}: ${title} (${c.priority ?? c.severity})`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: title, emoji: false } },
      {
        type: 'section',
        text: { type: 'mrkdwn', text: `*${headline}*` },
        fields: facts.map(([k, v]) => ({ type: 'mrkdwn', text: `*${k}*\n${escapeMrkdwn(v)}` })),
      },
      {
        type: 'actions',
        elements: [
          { type: 'button', text: { type: 'plain_text', text: 'Open the case' }, url: c.consoleUrl },
        ],
      },
    ],
  };
}
