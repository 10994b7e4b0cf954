import { expect } from 'vitest';

/** The RFC 9457 problem document the API answers with (docs/api.md#errors), for `toEqual`/`toMatchObject`. */
export function problemDocument(status: number, code: string, title: string, detail: string) {
  return {
    type: `https://docs.vulntriage.dev/errors/${code}`,
    title,
    status,
    code,
    detail,
    requestId: expect.any(String),
  };
}
