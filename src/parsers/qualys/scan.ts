import { isIpAddress, nonEmpty, parsePort } from '../format-parser.js';
import { RecordCollector, firstField, hasExploit, qualysCvssFields } from './common.js';
import { severityFromQualys } from '../severity.js';
import type { ScopeCollector } from '../scope.js';
import type { FindingDraft } from '../types.js';
import type { XmlHandler, XmlWalker } from '../xml/xml-walker.js';

/** Record elements of the scan report and the section each lives in. */
const RECORDS: Readonly<Record<string, string>> = { VULN: 'VULNS', PRACTICE: 'PRACTICES', INFO: 'INFOS' };

interface IpState {
  value: string | null;
  name: string | null;
  os: string | null;
}

/**
 * Qualys scan report (`SCAN/IP/{VULNS,PRACTICES,INFOS}/CAT/{VULN,PRACTICE,INFO}`), docs/ingestion.md#formats.
 * Each record is complete in place (title, CVSS, CVEs inline), so findings stream out as records
 * close. INFOS are information gathered: always INFO whatever their Qualys level. SERVICES are
 * an inventory, not findings, and are skipped.
 */
export class QualysScanHandler implements XmlHandler {
  readonly roots = ['SCAN'];
  out: FindingDraft[] = [];
  private ip: IpState | null = null;
  private cat: Record<string, string> = {};
  private record: RecordCollector | null = null;

  constructor(private readonly scope: ScopeCollector) {}

  open(name: string, attrs: Record<string, string>, path: readonly string[], walker: XmlWalker): void {
    if (this.record) return;
    const parent = path[path.length - 2];
    if (name === 'IP' && path.length === 2)
      this.ip = { value: nonEmpty(attrs.value), name: nonEmpty(attrs.name), os: null };
    else if (name === 'CAT') this.cat = attrs;
    else if (RECORDS[name] && parent === 'CAT' && path[path.length - 3] === RECORDS[name]) {
      this.record = new RecordCollector(path.length, attrs);
      walker.beginExcerpt();
    }
  }

  close(name: string, text: string, path: readonly string[], walker: XmlWalker): void {
    if (this.record) {
      if (path.length === this.record.depth) {
        this.out.push(this.toDraft(name, this.record, walker.endExcerpt()));
        this.record = null;
      } else {
        this.record.add(path, text);
      }
      return;
    }
    if (name === 'OS' && this.ip && path.length === 3) this.ip.os = nonEmpty(text);
    else if (name === 'IP' && path.length === 2 && this.ip) {
      // Every IP of the report is a host the scan covered, with findings or not (docs/ingestion.md#rescans).
      const ip = this.ip;
      this.scope.addScanner('Qualys');
      this.scope.addHost({
        host: ip.name ?? ip.value,
        ip: isIpAddress(ip.value) ? ip.value : null,
        fqdn: ip.name,
      });
      this.ip = null;
    }
  }

  private toDraft(kind: string, r: RecordCollector, rawExcerpt: string): FindingDraft {
    const qid = nonEmpty(r.attrs.number);
    const ip = this.ip;
    return {
      scanner: 'Qualys',
      ruleId: qid,
      title: firstField(r, 'TITLE') ?? `Qualys QID ${qid ?? '?'}`,
      severity: kind === 'INFO' ? 'INFO' : severityFromQualys(r.attrs.severity),
      cveIds: r.cveIds(),
      ...qualysCvssFields(r.get('CVSS_BASE'), r.get('CVSS3_BASE')),
      description: firstField(r, 'DIAGNOSIS', 'CONSEQUENCE'),
      solution: firstField(r, 'SOLUTION'),
      evidence: firstField(r, 'RESULT'),
      exploitAvailable: hasExploit(r),
      asset: {
        host: ip?.name ?? ip?.value ?? null,
        ip: isIpAddress(ip?.value) ? ip!.value : null,
        fqdn: nonEmpty(this.cat.fqdn) ?? ip?.name ?? null,
        os: ip?.os ?? null,
      },
      port: parsePort(this.cat.port),
      protocol: nonEmpty(this.cat.protocol),
      rawExcerpt,
    };
  }
}
