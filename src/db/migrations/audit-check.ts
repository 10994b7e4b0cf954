/**
 * The audit action CHECK of `key_audit_events`, extended from the constraint as it stands rather
 * than rewritten from a list: migrations that add actions may run in any order on databases
 * that already ran some of them, and none drops another's actions.
 */
/** Rebuilds the audit action CHECK from its current list, plus `add`, minus `remove`, in order. */
export function extendAuditCheck(add: string[], remove: string[]): string {
  const literals = (xs: string[]) => `ARRAY[${xs.map((x) => `'${x}'`).join(', ')}]::text[]`;
  return `
    DO $$
    DECLARE
      current text[];
      wanted text[];
    BEGIN
      SELECT array_agg(m.a[1] ORDER BY m.n) INTO current
        FROM pg_constraint c,
             regexp_matches(pg_get_constraintdef(c.oid), '''([a-z_]+)''', 'g') WITH ORDINALITY AS m (a, n)
       WHERE c.conname = 'key_audit_events_action_check' AND c.conrelid = 'key_audit_events'::regclass;
      SELECT array_agg(x ORDER BY i) INTO wanted
        FROM unnest(current || ${add.length ? literals(add) : `ARRAY[]::text[]`}) WITH ORDINALITY AS u (x, i)
       WHERE NOT (x = ANY (${remove.length ? literals(remove) : `ARRAY[]::text[]`}))
         AND i = (SELECT min(j) FROM unnest(current || ${add.length ? literals(add) : `ARRAY[]::text[]`}) WITH ORDINALITY AS v (y, j) WHERE y = x);
      EXECUTE 'ALTER TABLE key_audit_events DROP CONSTRAINT key_audit_events_action_check';
      EXECUTE format(
        'ALTER TABLE key_audit_events ADD CONSTRAINT key_audit_events_action_check CHECK (action IN (%s))',
        (SELECT string_agg(quote_literal(w), ', ' ORDER BY k) FROM unnest(wanted) WITH ORDINALITY AS z (w, k)));
    END $$`;
}
