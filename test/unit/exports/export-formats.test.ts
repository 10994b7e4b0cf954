/* eslint-disable @typescript-eslint/no-explicit-any -- assertions walk parsed JSON documents */
import { text } from 'node:stream/consumers';
import { parse as parseCsv } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { CSV_COLUMNS, neutraliseCell } from '../../../src/domain/exports/csv-export.js';
import { RENDERERS, EXPORT_FORMATS } from '../../../src/domain/exports/formats.js';

const EXPORT_FORMAT_LIST = [...EXPORT_FORMATS];
import { ruleIdOf } from '../../../src/domain/exports/sarif-export.js';
import { cycloneDx16Validator, sarifValidator } from '../../helpers/export-schemas.js';
import { iterate, manyCases, META, SAMPLE_CASES } from './sample-cases.js';

const render = (format: (typeof EXPORT_FORMATS)[number], cases = SAMPLE_CASES) =>
  text(RENDERERS[format].render(iterate(cases), META));

describe('CSV export', () => {
  it('writes a header and one RFC 4180 record per case that parses back to the same values', async () => {
    const out = await render('csv');
    expect(out.startsWith(CSV_COLUMNS.join(',') + '\r\n')).toBe(true);
    const rows = parseCsv(out, { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(SAMPLE_CASES.length);
    expect(rows[2]!.title).toBe('SQL injection, "quoted", with\nnewline and , comma — ünïcödé');
    expect(rows[0]).toMatchObject({
      priority: 'CRITICAL',
      kev: 'true',
      cveIds: 'CVE-2021-44228 CVE-2021-45046',
      port: '443',
    });
    expect(rows[2]).toMatchObject({
      priority: '',
      recommendedAction: '',
      file: 'src/db/query.js',
      line: '42',
    });
    expect(rows[0]).toMatchObject({ assignee: '', tags: '', acceptanceExpiresAt: '', acceptanceNote: '' });
    expect(rows[1]).toMatchObject({
      assignee: 'alice@acme.test',
      tags: 'payments pci',
      acceptanceExpiresAt: '2027-05-01T00:00:00.000Z',
      acceptanceNote: 'Compensating WAF rule; upgrade with the Q2 release.',
    });
  });

  it('neutralises cells a spreadsheet would run as a formula', async () => {
    const rows = parseCsv(await render('csv'), { columns: true }) as Record<string, string>[];
    expect(rows[1]!.title).toBe(`'=HYPERLINK("http://evil.test","click")`);
    expect(rows[3]!.title).toBe(`'-2+3 looks like a formula`);
    expect(rows[3]!.host).toBe(`'@host`);
    for (const start of ['=', '+', '-', '@', '\t', '\r'])
      expect(neutraliseCell(`${start}x`)).toBe(`'${start}x`);
    expect(neutraliseCell('plain')).toBe('plain');
  });
});

describe('JSON Lines export', () => {
  it('writes one JSON object per line, across chunk boundaries', async () => {
    const cases = manyCases(2_500);
    const lines = (await render('jsonl', cases)).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(cases.map((c) => c.id));
  });

  it('shapes each line with the view it is given', async () => {
    const out = await text(
      RENDERERS.jsonl.render(iterate(SAMPLE_CASES.slice(0, 1)), META, (c) => ({ only: c.id })),
    );
    expect(out).toBe(`{"only":"${SAMPLE_CASES[0]!.id}"}\n`);
  });
});

describe('SARIF export', () => {
  const validate = sarifValidator();

  it('is a valid SARIF 2.1.0 log with a rule per scanner rule or CVE and a result per case', async () => {
    const cases = manyCases(3_000);
    const log = JSON.parse(await render('sarif', cases)) as {
      version: string;
      runs: {
        tool: { driver: { name: string; rules: { id: string }[] } };
        results: Record<string, unknown>[];
      }[];
    };
    expect(validate(log), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    const run = log.runs[0]!;
    expect(run.tool.driver.name).toBe('vuln-triage-service');
    expect(run.results).toHaveLength(3_000);
    expect(run.tool.driver.rules.map((r) => r.id)).toEqual([...new Set(cases.map(ruleIdOf))]);
    for (const [i, r] of run.results.entries()) {
      expect(run.tool.driver.rules[r.ruleIndex as number]!.id).toBe(r.ruleId);
      expect(r.partialFingerprints).toEqual({ 'vulnTriageCase/v1': cases[i]!.fingerprint });
    }
  });

  it('takes the level from the triage priority, else the severity, and locates file cases', async () => {
    const log = JSON.parse(await render('sarif')) as { runs: { results: Record<string, any>[] }[] };
    const [critical, high, sast, low, info] = log.runs[0]!.results;
    expect([critical!.level, high!.level, sast!.level, low!.level, info!.level]).toEqual([
      'error',
      'error',
      'warning',
      'note',
      'note',
    ]);
    expect(sast!.locations[0].physicalLocation).toEqual({
      artifactLocation: { uri: 'src/db/query.js' },
      region: { startLine: 42 },
    });
    expect(critical!.properties).toMatchObject({ kev: true, epss: 0.97, triage: { priority: 'CRITICAL' } });
  });

  it('is valid for an empty export, and the validator refuses a wrong level', async () => {
    expect(validate(JSON.parse(await render('sarif', [])))).toBe(true);
    const log = JSON.parse(await render('sarif')) as { runs: { results: { level: string }[] }[] };
    log.runs[0]!.results[0]!.level = 'fatal';
    expect(validate(log)).toBe(false);
  });
});

describe('CycloneDX 1.6 VEX export', () => {
  const validate = cycloneDx16Validator();
  type Vex = { vulnerabilities: Record<string, any>[]; components: { 'bom-ref': string }[] };

  it('validates against the official CycloneDX 1.6 schema, with every affects ref resolved', async () => {
    const bom = JSON.parse(await render('cyclonedx-vex', manyCases(1_500))) as Vex;
    expect(validate(bom), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    expect(bom.vulnerabilities).toHaveLength(1_500);
    const refs = new Set(bom.components.map((c) => c['bom-ref']));
    expect(refs.size).toBe(bom.components.length);
    for (const v of bom.vulnerabilities) for (const a of v.affects ?? []) expect(refs.has(a.ref)).toBe(true);
  });

  it('maps status to analysis.state and the action to a response, the reasoning to the detail', async () => {
    const bom = JSON.parse(await render('cyclonedx-vex')) as Vex;
    const analyses = bom.vulnerabilities.map((v) => v.analysis);
    expect(analyses.map((a) => a.state)).toEqual([
      'in_triage',
      'exploitable',
      'in_triage',
      'resolved',
      'not_affected',
    ]);
    expect(analyses.map((a) => a.response)).toEqual([
      ['update'],
      ['will_not_fix'],
      undefined,
      undefined,
      undefined,
    ]);
    expect(analyses[0].detail).toBe(SAMPLE_CASES[0]!.triage!.reasoning);
    const [log4j, spring] = bom.vulnerabilities;
    expect(log4j).toMatchObject({
      id: 'CVE-2021-44228',
      cwes: [502, 20],
      references: [{ id: 'CVE-2021-45046' }],
    });
    expect(log4j!.ratings).toEqual([
      expect.objectContaining({ score: 10, severity: 'critical', method: 'CVSSv31' }),
      expect.objectContaining({ severity: 'critical', method: 'other' }),
    ]);
    expect(spring!.affects).toEqual([{ ref: 'pkg:maven/org.springframework/spring-beans@5.3.17' }]);
    spring!.analysis.state = 'ignored';
    expect(validate(bom)).toBe(false);
  });

  it('exports an accepted risk as will_not_fix with its justification and expiry, whatever its triage advised', async () => {
    const accepted = SAMPLE_CASES[1]!;
    const bom = JSON.parse(await render('cyclonedx-vex', [accepted])) as Vex;
    expect(validate(bom), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    const [v] = bom.vulnerabilities;
    expect(v!.analysis).toMatchObject({
      state: 'exploitable',
      response: ['will_not_fix'],
      detail:
        'Compensating WAF rule; upgrade with the Q2 release. (risk accepted until 2027-05-01T00:00:00.000Z)',
    });
    expect(v!.properties).toEqual(
      expect.arrayContaining([
        { name: 'vuln-triage:acceptanceExpiresAt', value: '2027-05-01T00:00:00.000Z' },
        { name: 'vuln-triage:assignee', value: 'alice@acme.test' },
        { name: 'vuln-triage:tag', value: 'pci' },
      ]),
    );
  });

  it('exports a false positive as not_affected with no response, even when its triage said to patch', async () => {
    const triaged = { ...SAMPLE_CASES[0]!, status: 'false_positive' as const };
    expect(triaged.triage?.recommendedAction).toBe('PATCH_IMMEDIATELY');
    const bom = JSON.parse(await render('cyclonedx-vex', [triaged])) as Vex;
    expect(validate(bom), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    expect(bom.vulnerabilities[0]!.analysis.state).toBe('not_affected');
    expect(bom.vulnerabilities[0]!.analysis).not.toHaveProperty('response');
  });
});

describe('a reader that goes away', () => {
  it.each(EXPORT_FORMAT_LIST)('stops pulling cases when the %s stream is destroyed', async (format) => {
    let pulled = 0;
    let ended = false;
    async function* source() {
      try {
        for (;;) {
          pulled++;
          yield manyCases(1)[0]!;
        }
      } finally {
        ended = true;
      }
    }
    const out = RENDERERS[format].render(source(), META);
    for await (const chunk of out) {
      expect(chunk).toBeTruthy();
      out.destroy();
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
    const seen = pulled;
    await new Promise((r) => setTimeout(r, 50));
    expect(pulled).toBe(seen);
    expect(ended).toBe(true);
  });
});
