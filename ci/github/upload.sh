#!/usr/bin/env bash
# The GitHub Action's upload step (action.yml): runs the published `vuln-triage` CLI and turns
# its --json answer into step outputs. Reads the action's inputs from INPUT_* variables and
# writes `name=value` lines to $GITHUB_OUTPUT; the CLI's exit code is the step's
# (docs/clients.md#github-action). The API key arrives as VULN_TRIAGE_API_KEY, never as a flag.
set -uo pipefail

args=(scan upload "$INPUT_FILE" --json)
[ -n "${INPUT_FORMAT:-}" ] && args+=(--format "$INPUT_FORMAT")
[ -n "${INPUT_ASSET:-}" ] && args+=(--asset "$INPUT_ASSET")
[ -n "${INPUT_TRIAGE:-}" ] && args+=(--triage "$INPUT_TRIAGE")
[ -n "${INPUT_FAIL_ON:-}" ] && args+=(--fail-on "$INPUT_FAIL_ON")
[ -n "${INPUT_FAIL_ON_PRIORITY:-}" ] && args+=(--fail-on-priority "$INPUT_FAIL_ON_PRIORITY")
[ -n "${INPUT_SARIF_OUT:-}" ] && args+=(--sarif-out "$INPUT_SARIF_OUT")
[ -z "${INPUT_FAIL_ON:-}${INPUT_FAIL_ON_PRIORITY:-}${INPUT_SARIF_OUT:-}" ] && args+=(--wait)

result="$(mktemp)"
vuln-triage "${args[@]}" >"$result"
code=$?

node - "$result" "$code" >>"$GITHUB_OUTPUT" <<'JS'
const [file, code] = process.argv.slice(2);
let scan = {};
try {
  scan = JSON.parse(require('node:fs').readFileSync(file, 'utf8')).scans[0] ?? {};
} catch {
  // no JSON: the CLI failed before uploading (its error is on stderr)
}
const counts = scan.scan?.counts ?? {};
const gate = (v) => (v ? String(v.cases) : '');
const out = {
  'scan-id': scan.scanId ?? '',
  status: scan.scan?.status ?? '',
  findings: counts.findings ?? '',
  'new-cases': counts.new ?? '',
  duplicates: counts.duplicate ?? '',
  'failing-cases': gate(scan.failOn),
  'failing-priority-cases': gate(scan.failOnPriority),
  'sarif-file': scan.sarif ?? '',
  'exit-code': code,
};
for (const [k, v] of Object.entries(out)) console.log(`${k}=${v}`);
JS
rm -f "$result"
exit "$code"
