/**
 * The gate's report for a person (`npm run gate`) and for machines (`--json`). Formatting only:
 * every figure comes from the record and the studies.
 */
import type { Confusion, EvaluationMetrics } from '../domain/inhouse/evaluate.js';
import type { GateRecord } from '../domain/inhouse/gate.js';
import type { GateStudies, SplitFigures, VerbatimFigures } from '../domain/inhouse/gate-studies.js';

const pct = (x: number | null): string => (x === null ? 'n/a' : `${(x * 100).toFixed(2)}%`);
const signedPoints = (x: number): string => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)}`;

/** What `--json` prints: the stored record, plus the studies (null when no training file). */
export function gateJson(record: GateRecord, studies: GateStudies | null): string {
  return JSON.stringify({ ...record, studies }, null, 2);
}

export function confusionLines(title: string, c: Confusion<string>): string[] {
  const classes = Object.keys(c);
  const width = Math.max(8, ...classes.map((k) => k.length + 2));
  const cell = (s: string): string => s.padStart(width);
  const lines = [`${title} (labelled ↓, predicted →)`, `  ${''.padEnd(width)}${classes.map(cell).join('')}`];
  for (const labelled of classes) {
    const row = c[labelled] ?? {};
    lines.push(`  ${labelled.padEnd(width)}${classes.map((p) => cell(String(row[p] ?? 0))).join('')}`);
  }
  return lines;
}

function figureRow(label: string, m: EvaluationMetrics): string {
  return (
    `  ${label.padEnd(30)}${String(m.rows).padStart(7)}  ${pct(m.agreement).padStart(9)}  ` +
    `${pct(m.majorityBaselineAgreement).padStart(9)}  ${pct(m.elevatedRecall).padStart(9)}  ` +
    `${pct(m.nonTrackPrecision).padStart(10)}`
  );
}

function studyLines(label: string, f: SplitFigures): string[] {
  return [
    `${figureRow(label, f.metrics)}   (${f.split}; trained on ${f.trainRows})`,
    `${figureRow('  without verbatim', f.withoutVerbatim.metrics)}   (${f.withoutVerbatim.dropped} dropped)`,
  ];
}

function verbatimLine(label: string, v: VerbatimFigures): string {
  return `${figureRow(label, v.metrics)}   (${v.dropped} dropped)`;
}

/** The report for a person: decision figures, confusion matrices, studies, verdict. */
export function gateText(r: GateRecord, studies: GateStudies | null): string {
  const m = r.metrics;
  const t = r.thresholds;
  const lines = [
    `model     ${r.modelVersion}`,
    `dataset   ${r.datasetName} (sha256 ${r.datasetSha256}, ${m.datasetRows} rows)`,
    `scored    ${m.rows} rows: ${m.scope}`,
    `agreement ${pct(m.agreement)}, majority baseline ${pct(m.majorityBaselineAgreement)}: ` +
      `${signedPoints(m.agreement - m.majorityBaselineAgreement)} points (min +${(t.minAgreementOverBaseline * 100).toFixed(2)})`,
    `elevated recall     ${pct(m.elevatedRecall)} (min ${pct(t.minElevatedRecall)})`,
    `non-Track precision ${pct(m.nonTrackPrecision)} (min ${pct(t.minNonTrackPrecision)})`,
    `accuracy  exploitation ${pct(m.accuracy.exploitation)}, automatable ${pct(m.accuracy.automatable)}, technical impact ${pct(m.accuracy.technicalImpact)}`,
    `KEV floor ${m.kevFloorViolations} violation(s) in ${m.kevRows} KEV row(s)`,
    '',
    ...confusionLines('SSVC outcome', m.outcomeConfusion),
    ...confusionLines('exploitation', m.pointConfusion.exploitation),
    ...confusionLines('automatable', m.pointConfusion.automatable),
    ...confusionLines('technical impact', m.pointConfusion.technicalImpact),
    '',
  ];
  if (studies === null) {
    lines.push('studies   not run: pass --training FILE (the file the model was trained on)');
  } else {
    lines.push(
      `studies   on the training file (sha256 ${studies.trainingSha256}); reported, not decided on`,
      `  ${''.padEnd(30)}${'rows'.padStart(7)}  ${'agreement'.padStart(9)}  ${'baseline'.padStart(9)}  ` +
        `${'elevated'.padStart(9)}  ${'non-Track'.padStart(10)}`,
      ...studyLines('random split (shipped model)', studies.randomSplit),
      ...studyLines('time-ordered split (refitted)', studies.timeOrdered),
      verbatimLine('scored rows without verbatim', studies.underTestWithoutVerbatim),
    );
  }
  lines.push('', r.passed ? 'PASS' : `FAIL\n  - ${r.failures.join('\n  - ')}`);
  return lines.join('\n');
}
