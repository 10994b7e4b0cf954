import type { DeliveryCase } from '../types.js';

/**
 * A case as an Atlassian Document Format description (Jira Cloud REST v3 accepts only ADF):
 * title, asset, CVEs linked to NVD, triage reasoning, KEV/EPSS, first/last seen, a link back.
 * Only node types every Jira site renders: doc, heading, paragraph, bulletList, listItem, text
 * with `strong` and `link` marks.
 */
type Mark = { type: 'strong' } | { type: 'link'; attrs: { href: string } };
interface TextNode {
  type: 'text';
  text: string;
  marks?: Mark[];
}
type Inline = TextNode;
interface Block {
  type: string;
  attrs?: Record<string, unknown>;
  content?: (Block | Inline)[];
}

const text = (t: string, marks?: Mark[]): TextNode =>
  marks ? { type: 'text', text: t, marks } : { type: 'text', text: t };
const para = (...content: Inline[]): Block => ({
  type: 'paragraph',
  content: content.filter((n) => n.text !== ''),
});
const item = (label: string, ...value: Inline[]): Block => ({
  type: 'listItem',
  content: [para(text(`${label}: `, [{ type: 'strong' }]), ...value)],
});
const link = (t: string, href: string): TextNode => text(t, [{ type: 'link', attrs: { href } }]);

export function caseToAdf(c: DeliveryCase): { version: 1; type: 'doc'; content: Block[] } {
  const items: Block[] = [
    item('Asset', text(c.asset ?? c.host ?? c.component ?? 'unknown')),
    item('Severity', text(c.severity)),
  ];
  if (c.priority)
    items.push(
      item('Priority', text(`${c.priority}${c.recommendedAction ? ` (${c.recommendedAction})` : ''}`)),
    );
  if (c.cveIds.length > 0) {
    const cves: Inline[] = [];
    c.cveIds.slice(0, 50).forEach((id, i) => {
      if (i > 0) cves.push(text(', '));
      cves.push(link(id, `https://nvd.nist.gov/vuln/detail/${encodeURIComponent(id)}`));
    });
    items.push(item('CVEs', ...cves));
  }
  items.push(item('Known exploited (KEV)', text(c.kev ? 'yes' : 'no')));
  if (c.epss !== null) items.push(item('EPSS', text(c.epss.toFixed(3))));
  if (c.cvssScore !== null) items.push(item('CVSS', text(String(c.cvssScore))));
  items.push(item('Scanner', text(`${c.scanner}${c.ruleId ? ` (${c.ruleId})` : ''}`)));
  items.push(item('First seen', text(c.firstSeen.toISOString())));
  items.push(item('Last seen', text(c.lastSeen.toISOString())));
  const content: Block[] = [
    { type: 'heading', attrs: { level: 3 }, content: [text(c.title || 'Untitled case')] },
    { type: 'bulletList', content: items },
  ];
  if (c.reasoning) content.push(para(text('Triage: ', [{ type: 'strong' }]), text(c.reasoning)));
  content.push(para(text('Case: '), link(c.url, c.url)));
  return { version: 1, type: 'doc', content };
}

/** The same, as GitHub-flavoured Markdown, ending with the hidden idempotency marker. */
export function caseToMarkdown(c: DeliveryCase, marker: string): string {
  const lines = [
    `### ${c.title}`,
    '',
    `- **Asset**: ${c.asset ?? c.host ?? c.component ?? 'unknown'}`,
    `- **Severity**: ${c.severity}`,
  ];
  if (c.priority)
    lines.push(`- **Priority**: ${c.priority}${c.recommendedAction ? ` (${c.recommendedAction})` : ''}`);
  if (c.cveIds.length > 0)
    lines.push(
      `- **CVEs**: ${c.cveIds
        .slice(0, 50)
        .map((id) => `[${id}](https://nvd.nist.gov/vuln/detail/${encodeURIComponent(id)})`)
        .join(', ')}`,
    );
  lines.push(`- **Known exploited (KEV)**: ${c.kev ? 'yes' : 'no'}`);
  if (c.epss !== null) lines.push(`- **EPSS**: ${c.epss.toFixed(3)}`);
  if (c.cvssScore !== null) lines.push(`- **CVSS**: ${c.cvssScore}`);
  lines.push(`- **Scanner**: ${c.scanner}${c.ruleId ? ` (${c.ruleId})` : ''}`);
  lines.push(
    `- **First seen**: ${c.firstSeen.toISOString()}`,
    `- **Last seen**: ${c.lastSeen.toISOString()}`,
  );
  if (c.reasoning) lines.push('', `**Triage**: ${c.reasoning}`);
  lines.push('', `Case: ${c.url}`, '', `<!-- ${marker} -->`);
  return lines.join('\n');
}
