/**
 * A fake Slack incoming webhook on 127.0.0.1 (random port), answering as Slack does
 * (https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks): `200 ok` as plain
 * text; `400 invalid_payload` for a body that is not a JSON object with `text` or `blocks`;
 * `400 invalid_blocks` for blocks Block Kit refuses (unknown type, a header over 150 characters,
 * more than 10 fields, a button without text); `404 no_service` for a path that is not a live
 * webhook; `410 channel_is_archived` once the channel is archived; and `429` with `Retry-After`
 * as Slack does over its limit of one message a second (scripted here with `failNext`).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlackMessageSeen {
  path: string;
  headers: IncomingHttpHeaders;
  body: { text?: string; blocks?: Record<string, unknown>[] };
  /** When it arrived (epoch ms). */
  at: number;
}

export interface FakeSlack {
  /** The one live webhook's URL. */
  webhookUrl: string;
  /** A well-formed webhook URL Slack does not know (revoked, or never made). */
  unknownUrl: string;
  /** Messages Slack took and posted. */
  posted: SlackMessageSeen[];
  /** Every request, answered or not. */
  requests: SlackMessageSeen[];
  /** The channel was archived: every message gets 410. */
  archived: boolean;
  /** The next requests get these answers instead of being posted. */
  failNext(answers: { status: number; body: string; headers?: Record<string, string> }[]): void;
  close(): Promise<void>;
}

const HOOK_PATH = '/services/T0001/B0001/' + 'x'.repeat(24);

/** Why Block Kit refuses `blocks`, or null. A small part of its rules: the ones we could break. */
function blocksProblem(blocks: unknown): string | null {
  if (!Array.isArray(blocks) || blocks.length === 0 || blocks.length > 50) return 'invalid_blocks';
  for (const b of blocks as Record<string, unknown>[]) {
    const text = b.text as { type?: unknown; text?: unknown } | undefined;
    if (b.type === 'header') {
      if (text?.type !== 'plain_text' || typeof text.text !== 'string') return 'invalid_blocks';
      if (text.text.length === 0 || [...text.text].length > 150) return 'invalid_blocks';
    } else if (b.type === 'section') {
      const fields = b.fields as { type?: unknown; text?: unknown }[] | undefined;
      if (!text && !fields) return 'invalid_blocks';
      if (text && (typeof text.text !== 'string' || text.text.length > 3000)) return 'invalid_blocks';
      if (
        fields &&
        (fields.length > 10 || fields.some((f) => typeof f.text !== 'string' || f.text.length > 2000))
      )
        return 'invalid_blocks';
    } else if (b.type === 'actions') {
      const elements = b.elements as
        { type?: unknown; text?: { text?: unknown }; url?: unknown }[] | undefined;
      if (!Array.isArray(elements) || elements.length === 0) return 'invalid_blocks';
      for (const e of elements) {
        if (e.type !== 'button' || typeof e.text?.text !== 'string') return 'invalid_blocks';
        if (e.url !== undefined && (typeof e.url !== 'string' || !/^https?:\/\//.test(e.url)))
          return 'invalid_blocks';
      }
    } else if (b.type !== 'context' && b.type !== 'divider') return 'invalid_blocks';
  }
  return null;
}

export async function startFakeSlack(): Promise<FakeSlack> {
  const queue: { status: number; body: string; headers?: Record<string, string> }[] = [];
  const slack: FakeSlack = {
    webhookUrl: '',
    unknownUrl: '',
    posted: [],
    requests: [],
    archived: false,
    failNext: (answers) => void queue.push(...answers),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = (status: number, body: string, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers }).end(body);
      const at = Date.now();
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      const seen: SlackMessageSeen = {
        path: req.url ?? '',
        headers: req.headers,
        body: (body ?? {}) as SlackMessageSeen['body'],
        at,
      };
      slack.requests.push(seen);
      if (req.method !== 'POST' || req.url !== HOOK_PATH) return answer(404, 'no_service');
      const scripted = queue.shift();
      if (scripted) return answer(scripted.status, scripted.body, scripted.headers);
      if (slack.archived) return answer(410, 'channel_is_archived');
      const msg = body as { text?: unknown; blocks?: unknown } | undefined;
      if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return answer(400, 'invalid_payload');
      if (typeof msg.text !== 'string' && msg.blocks === undefined) return answer(400, 'invalid_payload');
      if (msg.blocks !== undefined) {
        const problem = blocksProblem(msg.blocks);
        if (problem) return answer(400, problem);
      }
      slack.posted.push(seen);
      return answer(200, 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  slack.webhookUrl = `${base}${HOOK_PATH}`;
  slack.unknownUrl = `${base}/services/T0001/B0002/${'y'.repeat(24)}`;
  return slack;
}
