/** For routes that take no query parameters: an unknown one is a 400 naming it, like a typo in a body. */
export const noQuery = { type: 'object', additionalProperties: false, properties: {} } as const;
