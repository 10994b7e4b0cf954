import {
  extractAliases,
  extractCves,
  isIpAddress,
  nonEmpty,
  normaliseCwe,
  parsePort,
  uniq,
  type FormatParser,
} from '../format-parser.js';
import type { ScopeCollector } from '../scope.js';
import { parseScore, severityFromNessus } from '../severity.js';
import type { FindingDraft } from '../types.js';
import { walkXml } from '../xml/walk-xml.js';
import type { XmlHandler, XmlWalker } from '../xml/xml-walker.js';

interface HostState {
  name: string | null;
  ip: string | null;
  fqdn: string | null;
  os: string | null;
}

interface ItemState {
  attrs: Record<string, string>;
  fields: Map<string, string>;
  cves: string[];
  cwes: string[];
  /** `xref` elements other than CWEs (advisory ids such as `GHSA:…`). */
  xrefs: string[];
}

/** Children of ReportItem kept as single values; the rest (cve, cwe, xref) are lists. */
const ITEM_FIELDS = new Set([
  'plugin_name',
  'description',
  'synopsis',
  'solution',
  'plugin_output',
  'cvss3_base_score',
  'cvss3_vector',
  'cvss_base_score',
  'cvss_vector',
  'exploit_available',
  'risk_factor',
]);

/**
 * Nessus v2 (`NessusClientData_v2`), docs/ingestion.md#formats: one finding per ReportItem. HostProperties
 * precede the ReportItems of a ReportHost, so host identity is known when each item closes and
 * nothing per host has to be buffered. Policy is skipped (it can be megabytes of preferences).
 * Every ReportHost, with findings or not, is a host the scan covered (docs/ingestion.md#rescans).
 */
class NessusHandler implements XmlHandler {
  readonly roots = ['NessusClientData_v2'];
  out: FindingDraft[] = [];
  private host: HostState | null = null;
  private item: ItemState | null = null;
  private tagName: string | null = null;

  constructor(private readonly scope: ScopeCollector) {}

  open(name: string, attrs: Record<string, string>, path: readonly string[], walker: XmlWalker): void {
    if (path[1] !== 'Report') return;
    if (name === 'ReportHost' && path.length === 3) {
      this.host = { name: nonEmpty(attrs.name), ip: null, fqdn: null, os: null };
    } else if (name === 'ReportItem' && this.host) {
      this.item = { attrs, fields: new Map(), cves: [], cwes: [], xrefs: [] };
      walker.beginExcerpt();
    } else if (name === 'tag' && path[path.length - 2] === 'HostProperties') {
      this.tagName = attrs.name ?? null;
    }
  }

  close(name: string, text: string, path: readonly string[], walker: XmlWalker): void {
    if (path[1] !== 'Report') return;
    if (this.item && path[path.length - 2] === 'ReportItem') {
      if (name === 'cve') this.item.cves.push(text);
      else if (name === 'cwe') this.item.cwes.push(text);
      else if (name === 'xref' && /^CWE:/i.test(text.trim())) this.item.cwes.push(text);
      else if (name === 'xref') this.item.xrefs.push(text);
      else if (ITEM_FIELDS.has(name)) this.item.fields.set(name, text);
    } else if (name === 'ReportItem' && this.item && this.host) {
      this.out.push(this.toDraft(this.item, this.host, walker.endExcerpt()));
      this.item = null;
    } else if (name === 'tag' && this.host && this.tagName) {
      this.applyHostTag(this.tagName, text.trim());
      this.tagName = null;
    } else if (name === 'ReportHost' && this.host) {
      this.scope.addScanner('Nessus');
      this.scope.addHost(hostAsset(this.host));
      this.host = null;
    }
  }

  private applyHostTag(tag: string, value: string): void {
    if (!this.host || value === '') return;
    if (tag === 'host-ip') this.host.ip = value;
    else if (tag === 'host-fqdn') this.host.fqdn = value;
    else if (tag === 'host-rdns' && this.host.fqdn === null && value !== this.host.ip) this.host.fqdn = value;
    else if (tag === 'operating-system') this.host.os = value;
  }

  private toDraft(item: ItemState, host: HostState, rawExcerpt: string): FindingDraft {
    const f = item.fields;
    const v3Score = parseScore(f.get('cvss3_base_score'));
    const v2Score = parseScore(f.get('cvss_base_score'));
    const v3Vector = nonEmpty(f.get('cvss3_vector'));
    const v2Vector = nonEmpty(f.get('cvss_vector'));
    const exploit = f.get('exploit_available')?.trim().toLowerCase();
    return {
      scanner: 'Nessus',
      ruleId: nonEmpty(item.attrs.pluginID),
      title:
        nonEmpty(item.attrs.pluginName) ??
        nonEmpty(f.get('plugin_name')) ??
        `Nessus plugin ${item.attrs.pluginID ?? '?'}`,
      severity: severityFromNessus(item.attrs.severity),
      cveIds: uniq(item.cves.flatMap((c) => extractCves(c))),
      aliases: uniq(item.xrefs.flatMap((x) => extractAliases(x))),
      cweIds: uniq(item.cwes.map((c) => normaliseCwe(c))),
      cvssScore: v3Score ?? v2Score,
      cvssVector: v3Score !== null ? v3Vector : v2Vector,
      cvssV3Score: v3Score,
      cvssV3Vector: v3Vector,
      cvssV2Score: v2Score,
      cvssV2Vector: v2Vector,
      description: nonEmpty(f.get('description')) ?? nonEmpty(f.get('synopsis')),
      solution: nonEmpty(f.get('solution')),
      evidence: nonEmpty(f.get('plugin_output')),
      asset: { ...hostAsset(host), os: host.os },
      port: parsePort(item.attrs.port),
      protocol: nonEmpty(item.attrs.protocol),
      exploitAvailable: exploit === 'true' ? true : exploit === 'false' ? false : null,
      rawExcerpt,
    };
  }
}

/** A ReportHost as a finding's asset names it. */
function hostAsset(host: HostState): { host: string | null; ip: string | null; fqdn: string | null } {
  // Without a host-ip tag the ReportHost name is the scanned target, usually an address.
  return { host: host.name, ip: host.ip ?? (isIpAddress(host.name) ? host.name : null), fqdn: host.fqdn };
}

/** Parses a `.nessus` v2 file. */
export const parseNessus: FormatParser = (chunks, ctx) => walkXml(chunks, new NessusHandler(ctx.scope), ctx);
