/**
 * A provider's request body as JSON text, serialized once per model but for the prompt's user
 * message: everything else in it (the model, the system prompt, the answer schema, sampling and
 * token settings) is the same for every request to that model, and re-serializing it was most of
 * the client's own work on a call. The text is byte for byte `JSON.stringify(build(...))`:
 * `JSON.stringify` of an object is the concatenation of its members' serializations, so the
 * user message's JSON string is spliced where a marker string stood.
 *
 * What is kept per model is the body around the user message, never a prompt or its text.
 */

/** Stands where the user message goes; JSON.stringify writes it as `"\u0000user-message\u0000"`. */
const MARKER = '\u0000user-message\u0000';
const MARKER_JSON = JSON.stringify(MARKER);

interface Template {
  system: string;
  /** The body's JSON before and after the user message's JSON string. */
  head: string;
  tail: string;
}

/**
 * Returns `(model, system, user) => JSON.stringify(build(model, system, user))`, computed from
 * a template made once per model (and system prompt). `build` must be pure and put `user`
 * once, as a string value; when the marker does not appear exactly once the body is serialized
 * whole.
 */
export function promptBodyWriter(
  build: (model: string, system: string, user: string) => unknown,
): (model: string, system: string, user: string) => string {
  const templates = new Map<string, Template | null>();
  return (model, system, user) => {
    let t = templates.get(model);
    if (t === undefined || (t !== null && t.system !== system)) {
      const parts = JSON.stringify(build(model, system, MARKER)).split(MARKER_JSON);
      t = parts.length === 2 ? { system, head: parts[0]!, tail: parts[1]! } : null;
      templates.set(model, t);
    }
    if (t === null) return JSON.stringify(build(model, system, user));
    return t.head + JSON.stringify(user) + t.tail;
  };
}
