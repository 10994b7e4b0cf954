/** JSON schema pieces the target kinds' request schemas share. */
export const targetText = (max: number) => ({ type: 'string', minLength: 1, maxLength: max }) as const;

export const targetUrl = { type: 'string', minLength: 1, maxLength: 2048 } as const;
