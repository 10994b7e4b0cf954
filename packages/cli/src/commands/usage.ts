import { EXIT, type ExitCode } from '../errors.js';
import type { Context } from '../context.js';
import { formatCount, table } from '../output.js';

export interface UsageOptions {
  from?: string;
  to?: string;
}

interface Totals {
  requests: number;
  aiCalls: number;
  inputTokens: number;
  outputTokens: number;
  spendUsd: string;
}

/** `GET /api/v1/usage` (README "Keys"): the fields shown. */
interface UsageReport {
  from: string;
  to: string;
  key: Totals & { id: string; label: string };
  workspace: Totals & {
    plan: string;
    aiCallLimit: number;
    aiCallsThisMonth: number;
    aiCallsRemaining: number;
  };
}

/** `vuln-triage usage`: the calling key's usage and the workspace's, with the AI calls left this month. */
export async function usage(ctx: Context, o: UsageOptions): Promise<ExitCode> {
  const report = await ctx.client.json<UsageReport>('GET', '/api/v1/usage', {
    query: { from: o.from, to: o.to },
  });
  if (ctx.json) {
    ctx.print(JSON.stringify(report, null, 2));
    return EXIT.ok;
  }
  const s = ctx.style;
  const row = (who: string, t: Totals) => [
    who,
    formatCount(t.requests),
    formatCount(t.aiCalls),
    formatCount(t.inputTokens),
    formatCount(t.outputTokens),
    `$${t.spendUsd}`,
  ];
  const w = report.workspace;
  ctx.print(`Usage from ${report.from} to ${report.to} (UTC)`);
  ctx.print(
    table(
      ['', 'REQUESTS', 'AI CALLS', 'INPUT TOKENS', 'OUTPUT TOKENS', 'SPEND'],
      [row(`key ${report.key.label}`, report.key), row('workspace', w)],
      [1, 2, 3, 4, 5],
    ),
  );
  const remaining = `${formatCount(w.aiCallsRemaining)} of ${formatCount(w.aiCallLimit)}`;
  const low = w.aiCallsRemaining < w.aiCallLimit * 0.1;
  ctx.print(
    `Plan ${s.bold(w.plan)}: ${formatCount(w.aiCallsThisMonth)} AI calls used this month, ${low ? s.red(remaining) : s.green(remaining)} remaining`,
  );
  return EXIT.ok;
}
