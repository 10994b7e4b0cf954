/** JSON schema pieces the target kinds' request schemas share. */
export const targetText = (max: number) => ({ type: 'string', minLength: 1, maxLength: max }) as const;

export const targetUrl = { type: 'string', minLength: 1, maxLength: 2048 } as const;

/** The request schema of a kind whose whole target is one URL: `{kind, url}`. */
export const urlTargetSchema = (kind: string) => ({
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'url'],
  properties: { kind: { const: kind }, url: targetUrl },
});
