import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/domain/inhouse/canonical-json.js';
import {
  inhouseTriage,
  InhouseModelError,
  loadInhouseModel,
  modelVersionOf,
  outcomeProbability,
  predictDecisionPoints,
} from '../../../src/domain/inhouse/model.js';
import type { InhouseModelFile } from '../../../src/domain/inhouse/model.js';
import { DEFAULT_TRAIN_OPTIONS, trainInhouseModel } from '../../../src/domain/inhouse/train.js';
import {
  forcedNonePartialFile,
  sampleRows,
  SHIPPED_MODEL_PATH,
  shippedModel,
  stackedFile,
} from './support.js';
import { readInhouseModelJson } from '../../../src/domain/inhouse/model-file.js';

const RCE = {
  kev: false,
  cvssScore: 9.8,
  cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
  // The VulDB advisory template, common in the labelled data: CISA marks these `poc`.
  text:
    'A vulnerability classified as critical has been found in Foo Shop 1.0. Affected is an unknown function of the file /admin/login.php. ' +
    'The manipulation of the argument username leads to sql injection. It is possible to launch the attack remotely. ' +
    'The exploit has been disclosed to the public and may be used.',
};

describe('in-house model', () => {
  it('ships a model whose stored version is the hash of its body', () => {
    const file = readInhouseModelJson(SHIPPED_MODEL_PATH) as InhouseModelFile;
    expect(shippedModel().version).toBe(file.version);
    expect(file.version).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('refuses a file whose weights were edited without a new version', () => {
    const file = readInhouseModelJson(SHIPPED_MODEL_PATH) as InhouseModelFile;
    (file.body.heads.exploitation.bias as number[])[0] = 0.5;
    expect(() => loadInhouseModel(file)).toThrow(InhouseModelError);
    expect(() => loadInhouseModel(file)).toThrow(/does not match its content/);
  });

  it('refuses malformed bodies', () => {
    const file = forcedNonePartialFile(true);
    file.body.heads.automatable.weights = [[0], [0]];
    file.version = modelVersionOf(file.body);
    expect(() => loadInhouseModel(file)).toThrow(
      'head "automatable" must have 2 biases and 2×2 finite weights',
    );
    expect(() => loadInhouseModel({})).toThrow('model file has no "body"');
  });

  it('keys the version on content, not on key order or whitespace', () => {
    const file = forcedNonePartialFile(true);
    const reordered = JSON.parse(
      JSON.stringify(Object.fromEntries(Object.entries(file.body).reverse()), null, 2),
    ) as InhouseModelFile['body'];
    expect(Object.keys(reordered)[0]).toBe('training');
    expect(modelVersionOf(reordered)).toBe(file.version);
    expect(canonicalJson({ b: 1, a: [2, { d: 3, c: 4 }] })).toBe('{"a":[2,{"c":4,"d":3}],"b":1}');
  });

  it('ships the stacked trees stage', () => {
    expect(shippedModel().body.stack?.boosters.exploitation.trees.length).toBeGreaterThan(0);
  });

  it('lets the stacked stage choose an elevated outcome when its weighted probability is larger', () => {
    const input = { ...RCE, mission: 'medium' as const };
    // P(Track) 0.6, P(Track*) 0.4: counted once, Track wins; counted twice, Track* (0.8) does.
    const plain = inhouseTriage(loadInhouseModel(stackedFile(1)), input);
    expect(plain).toMatchObject({ ssvcOutcome: 'Track', decisionPoints: { exploitation: 'none' } });
    const weighted = inhouseTriage(loadInhouseModel(stackedFile(2)), input);
    expect(weighted).toMatchObject({
      ssvcOutcome: 'Track*',
      priority: 'MEDIUM',
      decisionPoints: { exploitation: 'public_poc', automatable: 'yes', technicalImpact: 'total' },
    });
    expect(weighted.confidenceScore).toBeCloseTo(0.4, 3);
  });

  it('refuses a stack whose tree points backwards or whose weight is not positive', () => {
    const file = stackedFile(2);
    file.body.stack!.boosters.automatable.trees[0]![0] = { f: [0], t: [0], l: [0], r: [0], v: [0] };
    file.version = modelVersionOf(file.body);
    expect(() => loadInhouseModel(file)).toThrow('stack booster "automatable"');
    const zero = stackedFile(0);
    expect(() => loadInhouseModel(zero)).toThrow('"stack.elevatedWeight" must be a positive number');
  });

  it('predicts the same decision points and probabilities every time', () => {
    const a = predictDecisionPoints(shippedModel(), RCE);
    const b = predictDecisionPoints(shippedModel(), RCE);
    expect(a).toEqual(b);
    const sum = Object.values(a.probabilities.exploitation).reduce((x, y) => x + y, 0);
    expect(sum).toBeCloseTo(1, 12);
  });

  it('reads a disclosed exploit of a critical unauthenticated network flaw as poc, automatable, total', () => {
    expect(predictDecisionPoints(shippedModel(), RCE)).toMatchObject({
      exploitation: 'public_poc',
      automatable: 'yes',
      technicalImpact: 'total',
    });
  });

  it('maps the SSVC outcome to priority and action, with mission from the caller', () => {
    const model = shippedModel();
    const medium = inhouseTriage(model, { ...RCE, mission: 'medium' });
    expect(medium).toMatchObject({ ssvcOutcome: 'Track*', priority: 'MEDIUM', recommendedAction: 'MONITOR' });
    const high = inhouseTriage(model, { ...RCE, mission: 'high' });
    expect(high).toMatchObject({
      ssvcOutcome: 'Attend',
      priority: 'HIGH',
      recommendedAction: 'PATCH_SCHEDULED',
    });
    expect(high.confidenceScore).toBeGreaterThan(0);
    expect(high.confidenceScore).toBeLessThanOrEqual(1);
    expect(high.reasoning).toContain('SSVC Attend');
    expect(high.modelVersion).toBe(model.version);
  });

  it('gives confidence equal to the probability of the chosen outcome', () => {
    const model = shippedModel();
    const a = inhouseTriage(model, { ...RCE, mission: 'medium' });
    const p = outcomeProbability(a.decisionPoints.probabilities, 'medium', a.ssvcOutcome);
    expect(a.confidenceScore).toBeCloseTo(p, 3);
  });

  it('raises a KEV finding to HIGH when the floor rule is on, and not when it is off', () => {
    const input = { ...RCE, kev: true, mission: 'medium' as const };
    const floored = inhouseTriage(loadInhouseModel(forcedNonePartialFile(true)), input);
    expect(floored).toMatchObject({ ssvcOutcome: 'Track', priority: 'HIGH', kevFloorApplied: true });
    const bare = inhouseTriage(loadInhouseModel(forcedNonePartialFile(false)), input);
    expect(bare).toMatchObject({ ssvcOutcome: 'Track', priority: 'LOW', kevFloorApplied: false });
  });

  it('takes exploitation active from a KEV listing, not from the head', () => {
    const a = inhouseTriage(shippedModel(), { ...RCE, kev: true, mission: 'medium' });
    expect(a.decisionPoints).toMatchObject({ exploitation: 'active', exploitationFromKev: true });
    expect(a.decisionPoints.probabilities.exploitation).toEqual({ none: 0, public_poc: 0, active: 1 });
    expect(a.reasoning).toContain('exploitation active (listed in CISA KEV)');
    expect(['HIGH', 'CRITICAL']).toContain(a.priority);
  });

  it('trains deterministically: the same rows and options give the same version', () => {
    const rows = sampleRows();
    const options = { ...DEFAULT_TRAIN_OPTIONS, minDf: 2, epochs: 5, validationPercent: 0 };
    const a = trainInhouseModel(rows, { datasetSha256: 'test' }, options);
    const b = trainInhouseModel([...rows], { datasetSha256: 'test' }, options);
    expect(a.file.version).toBe(b.file.version);
    expect(JSON.stringify(a.file)).toBe(JSON.stringify(b.file));
    expect(a.report.trainRows).toBe(rows.length);
  });
});
