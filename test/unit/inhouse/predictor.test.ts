import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLabelledDataset } from '../../../src/domain/inhouse/dataset.js';
import { parseCvssVector } from '../../../src/domain/inhouse/features.js';
import type { FeatureInput } from '../../../src/domain/inhouse/features.js';
import {
  inhouseTriage,
  outcomeProbability,
  predictDecisionPoints,
  textHeadProbabilities,
} from '../../../src/domain/inhouse/model.js';
import type { InhouseModel } from '../../../src/domain/inhouse/model.js';
import { rowFeatureInput } from '../../../src/domain/inhouse/train.js';
import {
  referenceChoice,
  referencePredictDecisionPoints,
  referenceTextHeadProbabilities,
} from './reference-predict.js';
import { ROOT, sampleRows, shippedModel } from './support.js';

/** Every row of both fixture files, plus texts that probe the tokenizer's edges. */
function inputs(): FeatureInput[] {
  const train = parseLabelledDataset(
    readFileSync(path.join(ROOT, 'test/fixtures/inhouse/labelled-train-sample.csv'), 'utf8'),
  );
  const rows = [...sampleRows(), ...train].map(rowFeatureInput);
  const base = rows[0] as FeatureInput;
  const edges = [
    '',
    'a',
    'SQL injection; sql injection of the of the remote code code execution',
    'remote 2021 code: 12345 execution via the x-header 1.2.3 in in in',
    'İstanbul ÄÖÜ ﬁle REMOTE\tCODE\nEXECUTION — authenticated user’s buffer overflow',
    'remote '.repeat(200) + 'ransomware exploit disclosed to the public',
    'remote code execution',
    'the remote and code',
    'unknownword remote unknownword code execution',
  ];
  const vectors = [
    null,
    'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
    'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N',
    'AV:N/AC:L/Au:N/C:P/I:P/A:P',
    'CVSS:3.1/AV:N/AC:L',
  ];
  const extra = edges.flatMap((text, i) =>
    vectors.map((cvssVector, j) => ({
      ...base,
      text,
      cvssVector,
      cvssScore: j === 0 ? null : 9.8 - i,
      kev: (i + j) % 3 === 0,
      cve: j % 2 === 0 ? `CVE-2024-${1000 + i}` : null,
    })),
  );
  return [...rows, ...extra];
}

function same(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
}

describe('compiled predictor', () => {
  const model: InhouseModel = shippedModel();

  it('gives the text heads the probabilities of the named-feature path, bit for bit', () => {
    for (const input of inputs()) {
      const got = textHeadProbabilities(model, input);
      const want = referenceTextHeadProbabilities(model, input);
      for (const head of ['exploitation', 'automatable', 'technicalImpact'] as const) {
        expect(same(got[head], want[head]), `${head} of ${input.text.slice(0, 40)}`).toBe(true);
      }
    }
  });

  it('gives the stacked decision points, the chosen outcome and its confidence bit for bit', () => {
    const elevatedWeight = model.body.stack?.elevatedWeight ?? 1;
    for (const input of inputs()) {
      const got = predictDecisionPoints(model, input);
      const want = referencePredictDecisionPoints(model, input);
      expect(got).toStrictEqual(want);
      const answer = inhouseTriage(model, { ...input, mission: 'medium' });
      const choice = referenceChoice(want, 'medium', elevatedWeight);
      expect(answer.ssvcOutcome).toBe(choice.outcome);
      expect(answer.decisionPoints).toStrictEqual(choice.points);
      expect(
        Object.is(
          outcomeProbability(answer.decisionPoints.probabilities, 'medium', choice.outcome),
          choice.probability,
        ),
      ).toBe(true);
    }
  });
});

/** `parseCvssVector` as it was written with `split` and regular expressions. */
function regexParse(vector: string | null): unknown {
  if (!vector) return null;
  const parts = vector.trim().split('/');
  const head = parts[0] ?? '';
  const version = /^CVSS:3\.[01]$/.test(head) ? 'v3' : head === 'CVSS:4.0' ? 'v4' : null;
  if (!version) return null;
  const metrics: Record<string, string> = {};
  for (const part of parts.slice(1)) {
    const [k, v] = part.split(':');
    if (k && v && /^[A-Z]{1,3}$/.test(k) && /^[A-Z]$/.test(v)) metrics[k] = v;
  }
  const required =
    version === 'v3'
      ? ['AV', 'AC', 'PR', 'UI', 'S', 'C', 'I', 'A']
      : ['AV', 'AC', 'AT', 'PR', 'UI', 'VC', 'VI', 'VA', 'SC', 'SI', 'SA'];
  return required.every((m) => metrics[m] !== undefined) ? { version, metrics } : null;
}

describe('parseCvssVector without regular expressions', () => {
  it('parses exactly as the split-and-regex version, metric order included, over mutated vectors', () => {
    const bases = [
      'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
      'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N',
      'CVSS:3.0/AV:L/AC:H/PR:H/UI:R/S:C/C:L/I:N/A:L/E:P',
    ];
    const pieces = [
      '/',
      ':',
      'A',
      'N',
      'H',
      'a',
      ' ',
      '\n',
      'AV',
      'PR',
      'VC',
      'X',
      'CVSS:3.1',
      'CVSS:3.2',
      '1',
      'ABCD',
    ];
    let seed = 7;
    const rnd = (k: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor((seed / 2147483648) * k);
    };
    let parsed = 0;
    for (let i = 0; i < 20000; i++) {
      const b = bases[i % bases.length] as string;
      const at = rnd(b.length + 1);
      const piece = pieces[rnd(pieces.length)] as string;
      const v =
        i % 3 === 0
          ? b.slice(0, at) + piece + b.slice(at)
          : i % 3 === 1
            ? b.slice(0, at) + b.slice(at + 1 + rnd(3))
            : ` ${b}${piece} `;
      const want = regexParse(v);
      if (want) parsed++;
      expect(JSON.stringify(parseCvssVector(v)), v).toBe(JSON.stringify(want));
    }
    // Both sides of the check are exercised.
    expect(parsed).toBeGreaterThan(2000);
    expect(parsed).toBeLessThan(19000);
  });
});
