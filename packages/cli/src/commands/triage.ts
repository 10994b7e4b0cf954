import { readFile } from 'node:fs/promises';
import { usageError, type ExitCode, EXIT } from '../errors.js';
import type { Context } from '../context.js';
import { details } from '../output.js';

export interface TriageOptions {
  cve?: string[];
  title?: string;
  severity?: string;
  description?: string;
  cvss?: string;
  cvssVector?: string;
  file?: string;
}

/** `POST /api/v1/triage`'s answer (README "Triage"), the fields shown to a person. */
interface TriageAnswer {
  priority: string;
  recommendedAction: string;
  reasoning: string;
  confidenceScore: number;
  severityOverride: string | null;
  model: string;
  usage?: { inputTokens: number; outputTokens: number };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The request body: a JSON file (or `-` for stdin) as it is, else built from the flags. */
async function requestBody(o: TriageOptions): Promise<unknown> {
  if (o.file !== undefined) {
    const text = o.file === '-' ? await readStdin() : await readFile(o.file, 'utf8').catch(() => null);
    if (text === null) throw usageError(`${o.file}: no such file`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw usageError(`${o.file === '-' ? 'stdin' : o.file} is not JSON`);
    }
  }
  if (!o.title || !o.severity) {
    throw usageError(
      'triage needs --title and --severity (and --cve or --description), or --file F.json / --file -',
    );
  }
  const body: Record<string, unknown> = {
    cveIds: (o.cve ?? [])
      .flatMap((c) => c.split(','))
      .map((c) => c.trim())
      .filter(Boolean),
    title: o.title,
    severity: o.severity.toUpperCase(),
  };
  if (o.description !== undefined) body.description = o.description;
  if (o.cvss !== undefined) {
    const score = Number(o.cvss);
    if (o.cvss.trim() === '' || !Number.isFinite(score))
      throw usageError(`--cvss must be a number from 0 to 10, not ${o.cvss}`);
    body.cvssScore = score;
  }
  if (o.cvssVector !== undefined) body.cvssVector = o.cvssVector;
  return body;
}

/** `vuln-triage triage`: one finding to `POST /api/v1/triage`, the answer printed (or as JSON). */
export async function triage(ctx: Context, o: TriageOptions): Promise<ExitCode> {
  const body = await requestBody(o);
  const answer = await ctx.client.json<TriageAnswer>('POST', '/api/v1/triage', { body });
  if (ctx.json) {
    ctx.print(JSON.stringify(answer, null, 2));
    return EXIT.ok;
  }
  const s = ctx.style;
  const pairs: [string, string][] = [
    ['Priority', s.severity(answer.priority)],
    ['Action', s.bold(answer.recommendedAction)],
    ['Confidence', answer.confidenceScore.toFixed(2)],
  ];
  if (answer.severityOverride) pairs.push(['Severity override', answer.severityOverride]);
  pairs.push(['Model', answer.model]);
  if (answer.usage)
    pairs.push(['Tokens', `${answer.usage.inputTokens} in, ${answer.usage.outputTokens} out`]);
  pairs.push(['Reasoning', answer.reasoning]);
  ctx.print(details(pairs));
  return EXIT.ok;
}
