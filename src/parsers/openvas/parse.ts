import {
  extractCves,
  isIpAddress,
  nonEmpty,
  normaliseCwe,
  parsePort,
  uniq,
  type FormatParser,
} from '../format-parser.js';
import type { ScopeCollector } from '../scope.js';
import { parseScore, severityFromCvss } from '../severity.js';
import type { FindingDraft } from '../types.js';
import { walkXml } from '../xml/walk-xml.js';
import type { XmlHandler, XmlWalker } from '../xml/xml-walker.js';

interface ResultState {
  depth: number;
  /** Paths below the result of the open descendants, innermost last (`nvt`, `nvt/refs`, …). */
  rels: string[];
  id: string | null;
  oid: string | null;
  fields: Map<string, string>;
  cves: string[];
  cwes: string[];
}

/** `key=value|key=value` NVT tags; values may contain newlines but not `|`. */
function parseTags(tags: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (tags ?? '').split('|')) {
    const eq = part.indexOf('=');
    if (eq > 0) out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
}

/**
 * OpenVAS / Greenbone report XML (docs/ingestion.md#formats): `report/report/results/result`, also wrapped in
 * `get_reports_response`. The record is any `result` whose parent is `results`, which covers both
 * wrappings and never matches the `result_count` summaries.
 */
class OpenvasHandler implements XmlHandler {
  readonly roots = ['report', 'get_reports_response'];
  out: FindingDraft[] = [];
  private result: ResultState | null = null;
  /** Inside a report's `host` (the hosts scanned, with findings or not): its `ip`. */
  private reportHost: { depth: number; ip: string | null } | null = null;

  constructor(private readonly scope: ScopeCollector) {}

  open(name: string, attrs: Record<string, string>, path: readonly string[], walker: XmlWalker): void {
    if (!this.result && name === 'host' && path[path.length - 2] === 'report') {
      this.reportHost = { depth: path.length, ip: null };
      return;
    }
    if (!this.result) {
      if (name === 'result' && path[path.length - 2] === 'results') {
        this.result = {
          depth: path.length,
          rels: [],
          id: attrs.id ?? null,
          oid: null,
          fields: new Map(),
          cves: [],
          cwes: [],
        };
        walker.beginExcerpt();
      }
      return;
    }
    const rels = this.result.rels;
    const rel = rels.length === 0 ? name : `${rels[rels.length - 1]}/${name}`;
    rels.push(rel);
    if (rel === 'nvt') this.result.oid = nonEmpty(attrs.oid);
    else if (rel === 'nvt/refs/ref') {
      const type = (attrs.type ?? '').toLowerCase();
      if (type === 'cve') this.result.cves.push(attrs.id ?? '');
      else if (type === 'cwe') this.result.cwes.push(attrs.id ?? '');
    } else if (rel === 'nvt/severities/severity' && attrs.type) {
      this.result.fields.set('severity_type', attrs.type);
    }
  }

  close(name: string, text: string, path: readonly string[], walker: XmlWalker): void {
    const r = this.result;
    if (!r) {
      this.closeReportHost(name, text, path);
      return;
    }
    if (path.length === r.depth) {
      this.out.push(this.toDraft(r, walker.endExcerpt()));
      this.result = null;
      return;
    }
    const rel = r.rels.pop()!;
    // Older reports list CVEs as "CVE-a, CVE-b" text, or NOCVE; extractCves ignores the latter.
    if (rel === 'nvt/cve') r.cves.push(...extractCves(text));
    else r.fields.set(rel, text);
  }

  /** A report's `host` lists a scanned host, with findings or not (docs/ingestion.md#rescans). */
  private closeReportHost(name: string, text: string, path: readonly string[]): void {
    const h = this.reportHost;
    if (!h) return;
    if (name === 'ip' && path.length === h.depth + 1) h.ip = nonEmpty(text);
    else if (path.length === h.depth) {
      this.scope.addScanner('OpenVAS');
      if (h.ip) this.scope.addHost({ host: h.ip, ip: isIpAddress(h.ip) ? h.ip : null });
      this.reportHost = null;
    }
  }

  private toDraft(r: ResultState, rawExcerpt: string): FindingDraft {
    const f = r.fields;
    const tags = parseTags(f.get('nvt/tags'));
    const score = parseScore(f.get('severity')) ?? parseScore(f.get('nvt/cvss_base'));
    const vector = nonEmpty(f.get('nvt/severities/severity/value')) ?? nonEmpty(tags.get('cvss_base_vector'));
    const isV3 = vector?.startsWith('CVSS:3') ?? false;
    const hostText = nonEmpty(f.get('host'));
    const hostname = nonEmpty(f.get('host/hostname'));
    const [portPart, protoPart] = (f.get('port') ?? '').trim().split('/');
    const qod = parseScore(f.get('qod/value'));
    const threat = (f.get('threat') ?? '').trim().toLowerCase();
    return {
      scanner: 'OpenVAS',
      ruleId: r.oid,
      // The NVT name is the check's name; result/name is a copy in real reports and noise in some exports.
      title: nonEmpty(f.get('nvt/name')) ?? nonEmpty(f.get('name')) ?? `OpenVAS NVT ${r.oid ?? '?'}`,
      // "Log" and "False Positive" results carry severity 0 or below: informational.
      severity: threat === 'log' || threat === 'false positive' ? 'INFO' : severityFromCvss(score),
      cveIds: uniq(r.cves.flatMap((c) => extractCves(c))),
      cweIds: uniq(r.cwes.map((c) => normaliseCwe(c))),
      cvssScore: score !== null && score > 0 ? score : null,
      cvssVector: vector,
      cvssV3Score: isV3 && score !== null && score > 0 ? score : null,
      cvssV3Vector: isV3 ? vector : null,
      cvssV2Score: !isV3 && score !== null && score > 0 ? score : null,
      cvssV2Vector: isV3 ? null : vector,
      description: nonEmpty(tags.get('summary')) ?? nonEmpty(f.get('nvt/summary')),
      solution: nonEmpty(f.get('nvt/solution')) ?? nonEmpty(tags.get('solution')),
      evidence: nonEmpty(f.get('description')),
      asset: {
        host: hostText ?? hostname,
        ip: isIpAddress(hostText) ? hostText : null,
        fqdn: hostname,
      },
      port: parsePort(portPart),
      protocol: nonEmpty(protoPart),
      confidence: qod,
      rawExcerpt,
    };
  }
}

/** Parses an OpenVAS/Greenbone XML report. */
export const parseOpenvas: FormatParser = (chunks, ctx) =>
  walkXml(chunks, new OpenvasHandler(ctx.scope), ctx);
