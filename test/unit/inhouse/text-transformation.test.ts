import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CveEnrichment } from '../../../src/domain/enrichment/types.js';
import { parseLabelledDataset } from '../../../src/domain/inhouse/dataset.js';
import type { LabelledRow } from '../../../src/domain/inhouse/dataset.js';
import { extractFeatures, modelText, rowFeatureInput } from '../../../src/domain/inhouse/features.js';
import {
  predictDecisionPoints,
  stackInput,
  textHeadProbabilities,
} from '../../../src/domain/inhouse/model.js';
import { inhouseInputFromRequest } from '../../../src/domain/inhouse/provider.js';
import type { TriageRequest } from '../../../src/domain/triage-engine/types.js';
import { ROOT, shippedModel } from './support.js';

function trainRows(): LabelledRow[] {
  return parseLabelledDataset(
    readFileSync(path.join(ROOT, 'test/fixtures/inhouse/labelled-train-sample.csv'), 'utf8'),
  );
}

/**
 * The finding a scanner would send for a labelled row: the full description (the file's is cut at
 * 500 characters, so the rest is made up), with line breaks and runs of spaces the file's producer
 * collapsed, and a scanner's title.
 */
function requestFor(row: LabelledRow): { request: TriageRequest; enrichment: Map<string, CveEnrichment> } {
  const wrapped = row.description.replace(/ /g, (_, i: number) => (i % 7 === 0 ? '\n  ' : ' '));
  const description = `\t${wrapped}${row.description.length >= 500 ? ' and more text past the cut, in the full record.' : ''}\n`;
  const enrichment = new Map<string, CveEnrichment>([
    [
      row.cve,
      {
        cveId: row.cve,
        kev: row.kev,
        kevRansomware: false,
        kevDateAdded: row.kev ? '2024-01-01' : null,
        kevDueDate: null,
        epss: null,
        epssPercentile: null,
        epssDate: null,
        cvssScore: row.cvssScore,
        cvssVersion: null,
        cvssVector: row.cvssVector,
      },
    ],
  ]);
  return {
    request: { cveIds: [row.cve], title: `${row.cve} in some-package 1.2.3`, severity: 'HIGH', description },
    enrichment,
  };
}

describe('the text the model reads', () => {
  it('is the same at triage time as at training time for every record', () => {
    const model = shippedModel();
    for (const row of trainRows()) {
      const train = rowFeatureInput(row);
      const { request, enrichment } = requestFor(row);
      const { mission: _mission, ...triage } = inhouseInputFromRequest(request, enrichment);
      expect(triage, row.cve).toEqual(train);
      expect(extractFeatures(triage)).toEqual(extractFeatures(train));
      expect(stackInput(triage, textHeadProbabilities(model, triage))).toEqual(
        stackInput(train, textHeadProbabilities(model, train)),
      );
      expect(predictDecisionPoints(model, triage)).toEqual(predictDecisionPoints(model, train));
    }
  });

  it('leaves the file’s descriptions as they are, collapses white space and cuts at 500', () => {
    for (const row of trainRows()) expect(modelText(row.description)).toBe(row.description);
    expect(modelText('  a\n\tb  c ')).toBe('a b c');
    expect(modelText(`${'x'.repeat(499)}  y`)).toBe(`${'x'.repeat(499)} `);
    expect(modelText(`${'x'.repeat(300)}\n`)).toBe('x'.repeat(300));
  });

  it('reads the title only when there is no description', () => {
    expect(modelText('Heap overflow in foo.', 'CVE-2024-1 foo')).toBe('Heap overflow in foo.');
    expect(modelText('', 'Reflected XSS in /search')).toBe('Reflected XSS in /search');
    expect(modelText(undefined, 'Reflected XSS')).toBe('Reflected XSS');
    expect(modelText('  \n ', 'Reflected XSS')).toBe('Reflected XSS');
  });
});
