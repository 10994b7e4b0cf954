import { describe, expect, it } from 'vitest';
import { promptBodyWriter } from '../../../src/domain/triage-engine/providers/prompt-body.js';
import { SYSTEM_PROMPT } from '../../../src/domain/triage-engine/prompt.js';

const build = (model: string, system: string, user: string) => ({
  model,
  messages: [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ],
  response_format: { type: 'json_schema', json_schema: { name: 'record_triage', strict: true } },
  temperature: 0,
  max_completion_tokens: 800,
});

const USERS = [
  'Finding:\n{"title":"OpenSSL"}',
  'quotes " and backslashes \\ and \t tabs',
  'unicode é 漢字 😀, line separators \u2028\u2029, NUL \u0000 and a lone surrogate \ud800',
  '\u0000user-message\u0000',
  '',
];

describe('promptBodyWriter', () => {
  it('writes exactly JSON.stringify of the body, whatever the user message holds', () => {
    const write = promptBodyWriter(build);
    for (const model of ['gpt-5-mini', 'gpt-5'])
      for (const user of USERS)
        expect(write(model, SYSTEM_PROMPT, user)).toBe(JSON.stringify(build(model, SYSTEM_PROMPT, user)));
  });

  it('follows a different system prompt for the same model', () => {
    const write = promptBodyWriter(build);
    expect(write('m', 'first', 'u')).toBe(JSON.stringify(build('m', 'first', 'u')));
    expect(write('m', 'second', 'u')).toBe(JSON.stringify(build('m', 'second', 'u')));
  });

  it('serializes the whole body when the marker is not found exactly once', () => {
    const twice = (model: string, system: string, user: string) => ({ model, a: user, b: user, system });
    const write = promptBodyWriter(twice);
    expect(write('m', 's', 'hello')).toBe(JSON.stringify(twice('m', 's', 'hello')));
    expect(write('m', 's', 'other')).toBe(JSON.stringify(twice('m', 's', 'other')));
  });
});
