import { describe, expect, it } from 'vitest';
import { NOT_RESOLVING_NOTE, rescanPlan } from '../../../src/domain/scans/rescan-scope.js';

/** docs/ingestion.md#rescans: which scope a scan's hostless findings take, and what its notes say. */
const scope = (subjects: string[], tooManyHosts = false) => ({
  scanners: ['CodeQL'],
  hosts: [],
  tooManyHosts,
  subjects,
});

describe('rescanPlan', () => {
  it('asset= wins over the file’s subject', () => {
    const plan = rescanPlan(scope(['https://git/x']), { assetName: ' app-a ', resolveMissing: true });
    expect(plan.hostless).toBe('asset:app-a');
    expect(plan.notes).toEqual([]);
  });

  it('the one subject of the file, else none (and a note when there are several)', () => {
    expect(rescanPlan(scope(['https://git/x']), { assetName: null, resolveMissing: true }).hostless).toBe(
      'subject:https://git/x',
    );
    const two = rescanPlan(scope(['a', 'b']), { assetName: null, resolveMissing: true });
    expect(two.hostless).toBeNull();
    expect(two.notes[0]).toMatch(/names 2 subjects/);
  });

  it('resolveMissing=false: resolves nothing and says so; the scope is still named for its cases', () => {
    const plan = rescanPlan(scope(['x']), { assetName: null, resolveMissing: false });
    expect(plan).toMatchObject({ resolve: false, hostless: 'subject:x', notes: [NOT_RESOLVING_NOTE] });
  });

  it('too many hosts: a note', () => {
    expect(rescanPlan(scope([], true), { assetName: null, resolveMissing: true }).notes[0]).toMatch(
      /more than 100,000 hosts/,
    );
  });
});
