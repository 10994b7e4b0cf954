import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { isIpAddress, nonEmpty, parsePort, type ParserContext } from '../format-parser.js';
import { RecordCollector, firstField, hasExploit, qualysCvssFields } from './common.js';
import { SpillRowDecoder, encodeSpillRow, type SpillRow } from './spill.js';
import { severityFromQualys } from '../severity.js';
import type { ScopeCollector } from '../scope.js';
import type { FindingDraft } from '../types.js';
import type { XmlHandler, XmlWalker } from '../xml/xml-walker.js';

/** What the join needs from one glossary VULN_DETAILS; text fields are capped. */
interface GlossaryEntry {
  title: string | null;
  severity: string | undefined;
  cves: string[];
  cvss: Partial<FindingDraft>;
  description: string | null;
  solution: string | null;
  exploit: boolean | null;
}

/** Bound per glossary text field, so the glossary's memory is (distinct QIDs × a few KiB). */
const GLOSSARY_TEXT_CAP = 8 * 1024;
const JOIN_BATCH = 500;

const cap = (s: string | null): string | null =>
  s && s.length > GLOSSARY_TEXT_CAP ? s.slice(0, GLOSSARY_TEXT_CAP) : s;

/**
 * Qualys asset data report (docs/ingestion.md#formats). Hosts list QIDs only; titles, severities and CVEs live
 * in the GLOSSARY, which comes after all hosts. Join strategy: each VULN_INFO is written as one
 * row (`qualys-spill.ts`) to a private temp file while streaming (memory: one row), the glossary
 * is held as a map (memory: O(distinct QIDs), each entry's texts capped at 8 KiB), and after the
 * document ends the spill file is read back row by row and joined. Peak memory is therefore independent of
 * the number of hosts; disk use is about the size of the HOST_LIST section.
 */
export class QualysAssetHandler implements XmlHandler {
  readonly roots = ['ASSET_DATA_REPORT'];
  out: FindingDraft[] = [];
  private readonly spillPath: string;
  private spill: FileHandle | null = null;
  private spillBuffer = '';
  private host: Map<string, string> | null = null;
  private vuln: RecordCollector | null = null;
  private detail: RecordCollector | null = null;
  private readonly glossary = new Map<string, GlossaryEntry>();

  private readonly scope: ScopeCollector;

  constructor(ctx: ParserContext) {
    this.spillPath = join(ctx.tmpDir, `qualys-asset-join-${randomUUID()}.spill`);
    this.scope = ctx.scope;
  }

  open(name: string, attrs: Record<string, string>, path: readonly string[], walker: XmlWalker): void {
    if (this.vuln || this.detail) return;
    const parent = path[path.length - 2];
    if (name === 'HOST' && parent === 'HOST_LIST') this.host = new Map();
    else if (name === 'VULN_INFO' && parent === 'VULN_INFO_LIST' && this.host) {
      this.vuln = new RecordCollector(path.length, attrs);
      walker.beginExcerpt();
    } else if (name === 'VULN_DETAILS' && parent === 'VULN_DETAILS_LIST') {
      this.detail = new RecordCollector(path.length, attrs);
    }
  }

  close(name: string, text: string, path: readonly string[], walker: XmlWalker): void {
    if (this.vuln) {
      if (path.length === this.vuln.depth) this.spillRow(this.vuln, walker.endExcerpt());
      else this.vuln.add(path, text);
      return;
    }
    if (this.detail) {
      if (path.length === this.detail.depth) this.addGlossary(this.detail);
      else this.detail.add(path, text);
      return;
    }
    if (!this.host) return;
    if (path[path.length - 2] === 'HOST' && text.trim() !== '') this.host.set(name, text.trim());
    else if (name === 'HOST') {
      // Every HOST of the list is a host the scan covered, with findings or not (docs/ingestion.md#rescans).
      this.scope.addScanner('Qualys');
      this.scope.addHost(
        assetHost(
          this.host.get('IP') ?? null,
          this.host.get('DNS') ?? null,
          this.host.get('NETBIOS') ?? null,
        ),
      );
      this.host = null;
    }
  }

  private spillRow(v: RecordCollector, excerpt: string): void {
    const h = this.host!;
    const row: SpillRow = {
      qid: firstField(v, 'QID'),
      type: (v.get('TYPE') ?? '').trim(),
      port: nonEmpty(v.get('PORT')),
      protocol: nonEmpty(v.get('PROTOCOL')),
      result: firstField(v, 'RESULT'),
      ip: h.get('IP') ?? null,
      dns: h.get('DNS') ?? null,
      netbios: h.get('NETBIOS') ?? null,
      os: h.get('OPERATING_SYSTEM') ?? null,
      excerpt,
    };
    this.spillBuffer += encodeSpillRow(row);
    this.vuln = null;
  }

  private addGlossary(d: RecordCollector): void {
    const qid = firstField(d, 'QID') ?? nonEmpty(d.attrs.id?.replace(/^qid_/, ''));
    if (qid) {
      this.glossary.set(qid, {
        title: firstField(d, 'TITLE'),
        severity: d.get('SEVERITY'),
        cves: d.cveIds(),
        cvss: qualysCvssFields(d.get('CVSS_SCORE/CVSS_BASE'), d.get('CVSS3_SCORE/CVSS3_BASE')),
        description: cap(firstField(d, 'THREAT', 'IMPACT')),
        solution: cap(firstField(d, 'SOLUTION')),
        exploit: hasExploit(d),
      });
    }
    this.detail = null;
  }

  /** Writes buffered rows; awaited per input chunk, so a slow disk slows the read. */
  async afterChunk(): Promise<void> {
    if (this.spillBuffer === '') return;
    this.spill ??= await open(this.spillPath, 'wx', 0o600);
    const data = this.spillBuffer;
    this.spillBuffer = '';
    await this.spill.write(data);
  }

  async *finish(): AsyncGenerator<FindingDraft[], void, undefined> {
    await this.afterChunk();
    if (!this.spill) return;
    await this.spill.close();
    this.spill = null;
    const decoder = new SpillRowDecoder();
    let batch: FindingDraft[] = [];
    const input = createReadStream(this.spillPath, { encoding: 'utf8', highWaterMark: 256 * 1024 });
    for await (const text of input as AsyncIterable<string>) {
      for (const row of decoder.push(text)) {
        batch.push(this.join(row));
        if (batch.length >= JOIN_BATCH) {
          yield batch;
          batch = [];
        }
      }
    }
    decoder.end();
    if (batch.length > 0) yield batch;
  }

  async dispose(): Promise<void> {
    await this.spill?.close().catch(() => undefined);
    this.spill = null;
    await rm(this.spillPath, { force: true });
  }

  private join(row: SpillRow): FindingDraft {
    const g = row.qid ? this.glossary.get(row.qid) : undefined;
    // TYPE: Vuln (confirmed), Practice (potential), Ig (information gathered, always INFO).
    const informational = row.type.toLowerCase() === 'ig';
    return {
      scanner: 'Qualys',
      ruleId: row.qid,
      title: g?.title ?? `Qualys QID ${row.qid ?? '?'}`,
      severity: informational ? 'INFO' : severityFromQualys(g?.severity),
      cveIds: g?.cves ?? [],
      ...(g?.cvss ?? {}),
      description: g?.description ?? null,
      solution: g?.solution ?? null,
      evidence: row.result,
      exploitAvailable: g?.exploit ?? null,
      asset: { ...assetHost(row.ip, row.dns, row.netbios), os: row.os },
      port: parsePort(row.port),
      protocol: row.protocol,
      rawExcerpt: row.excerpt,
    };
  }
}

/** A HOST of the asset data report as its findings' asset names it. */
function assetHost(
  ip: string | null,
  dns: string | null,
  netbios: string | null,
): { host: string | null; ip: string | null; fqdn: string | null } {
  return { host: dns ?? netbios ?? ip, ip: isIpAddress(ip) ? ip : null, fqdn: dns };
}
