const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Ids in URLs are UUIDs; anything else cannot name a row, so callers answer 404 without a
 * query (and never hand a malformed id to PostgreSQL's uuid cast).
 */
export const isUuid = (s: string): boolean => UUID.test(s);
