import { expect } from 'vitest';

/** The RFC 9457 problem document the API answers with (DECISIONS §2), for `toEqual`/`toMatchObject`. */
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
