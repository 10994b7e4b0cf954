import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/lib/config.js';

const dir = mkdtempSync(path.join(tmpdir(), 'config-files-'));
let n = 0;
/** Writes `value` (JSON unless a string) to a fresh file and returns its path. */
function file(value: unknown): string {
  const p = path.join(dir, `f${n++}.json`);
  writeFileSync(p, typeof value === 'string' ? value : JSON.stringify(value));
  return p;
}
const plans = JSON.parse(readFileSync('config/plans.json', 'utf8'));
const triage = JSON.parse(readFileSync('config/triage.json', 'utf8'));

/** The problems `loadConfig` refused to start with (fails the test if it started). */
function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('loadConfig accepted a bad file');
}

describe('configuration files are checked at start', () => {
  it('accepts the checked-in files and exposes the triage chain', () => {
    const c = loadConfig({});
    expect(c.triage.chain.map((t) => t.tier)).toEqual(['routine', 'escalated-1', 'escalated-2']);
    expect(c.plans.free.batchMaxItems).toBe(100);
    expect(c.trialDays).toBe(14);
  });

  it('names a plan limit of the wrong type', () => {
    const bad = structuredClone(plans);
    bad.plans.free.batchMaxItems = '100';
    expect(problems({ PLANS_FILE: file(bad) })).toEqual([
      'PLANS_FILE: plans.free.batchMaxItems must be integer',
    ]);
  });

  it('names a missing plan and an unknown field', () => {
    const bad = structuredClone(plans);
    delete bad.plans.service;
    bad.plans.free.aiCalls = 5;
    expect(problems({ PLANS_FILE: file(bad) })).toEqual([
      'PLANS_FILE: plans.service is required',
      'PLANS_FILE: plans.free has unknown field "aiCalls"',
    ]);
  });

  it('says a file that is not JSON cannot be read', () => {
    expect(problems({ PLANS_FILE: file('{ "trialDays": ') })).toEqual([
      expect.stringMatching(/^PLANS_FILE: cannot read .*f\d+\.json \(/),
    ]);
  });

  it('names a bad field of the triage file, by its path', () => {
    const bad = structuredClone(triage);
    bad.thresholds.confidence = 1.5;
    bad.providers.openai.kind = 'openai';
    delete bad.chain[1].billedAs;
    expect(problems({ TRIAGE_CONFIG_FILE: file(bad) })).toEqual([
      'TRIAGE_CONFIG_FILE: thresholds.confidence must be <= 1',
      'TRIAGE_CONFIG_FILE: chain[1].billedAs is required',
      'TRIAGE_CONFIG_FILE: providers.openai.kind must be equal to one of the allowed values',
    ]);
  });

  it('refuses a triage file with an empty chain', () => {
    expect(problems({ TRIAGE_CONFIG_FILE: file({ ...triage, chain: [] }) })).toEqual([
      'TRIAGE_CONFIG_FILE: chain must NOT have fewer than 1 items',
    ]);
  });

  it('reports every bad file and bad variable together', () => {
    const found = problems({
      PORT: 'eighty',
      PLANS_FILE: file({ trialDays: -1, plans: plans.plans }),
      TRIAGE_CONFIG_FILE: file({ ...triage, localModel: '' }),
    });
    expect(found).toEqual([
      'PORT: expected a whole number from 0 to 65535, got "eighty"',
      'PLANS_FILE: trialDays must be >= 0',
      'TRIAGE_CONFIG_FILE: localModel must NOT have fewer than 1 characters',
    ]);
  });
});
