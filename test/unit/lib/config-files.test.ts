import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot, readDefaultTriageFile } from '../../../src/lib/config.js';
import { DEFAULT_TRIAGE_CONFIG } from '../../../src/domain/triage-engine/triage-config.js';

describe('lib/config reads config/triage.json for the engine', () => {
  it('returns the checked-in file, validated, and the engine builds its defaults from it', () => {
    const onDisk = JSON.parse(readFileSync(path.join(projectRoot, 'config', 'triage.json'), 'utf8')) as {
      thresholds: unknown;
      chain: { tier: string }[];
    };
    const file = readDefaultTriageFile();
    expect(file).toEqual(onDisk);
    expect(DEFAULT_TRIAGE_CONFIG.thresholds).toEqual(onDisk.thresholds);
    expect(DEFAULT_TRIAGE_CONFIG.chain.map((t) => t.tier)).toEqual(onDisk.chain.map((t) => t.tier));
  });
});
