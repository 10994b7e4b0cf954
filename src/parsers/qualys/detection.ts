import { isIpAddress, nonEmpty, parsePort } from '../format-parser.js';
import { RecordCollector, firstField, qualysCvssFields } from './common.js';
import { severityFromQualys } from '../severity.js';
import type { ScopeCollector } from '../scope.js';
import type { FindingDraft } from '../types.js';
import type { XmlHandler, XmlWalker } from '../xml/xml-walker.js';

/**
 * Qualys host detection list (`HOST_LIST_VM_DETECTION_OUTPUT/RESPONSE/HOST_LIST/HOST/
 * DETECTION_LIST/DETECTION`). Detections carry a QID but no title or CVEs: the KnowledgeBase is a
 * separate API call, so the title is "Qualys QID n" unless the detection itself names one, and
 * enrichment can retitle later. HOST fields (IP, DNS, OS) precede DETECTION_LIST in the schema,
 * so each detection streams out as it closes.
 */
export class QualysDetectionHandler implements XmlHandler {
  readonly roots = ['HOST_LIST_VM_DETECTION_OUTPUT'];
  out: FindingDraft[] = [];
  private host: Map<string, string> | null = null;
  private detection: RecordCollector | null = null;

  constructor(private readonly scope: ScopeCollector) {}

  open(name: string, attrs: Record<string, string>, path: readonly string[], walker: XmlWalker): void {
    if (this.detection) return;
    const parent = path[path.length - 2];
    if (name === 'HOST' && parent === 'HOST_LIST') this.host = new Map();
    else if (name === 'DETECTION' && parent === 'DETECTION_LIST' && this.host) {
      this.detection = new RecordCollector(path.length, attrs);
      walker.beginExcerpt();
    }
  }

  close(name: string, text: string, path: readonly string[], walker: XmlWalker): void {
    if (this.detection) {
      if (path.length === this.detection.depth) {
        this.out.push(this.toDraft(this.detection, walker.endExcerpt()));
        this.detection = null;
      } else {
        this.detection.add(path, text);
      }
      return;
    }
    if (!this.host) return;
    const parent = path[path.length - 2];
    if (parent === 'HOST' && text.trim() !== '') this.host.set(name, text.trim());
    else if (parent === 'DNS_DATA' && text.trim() !== '') this.host.set(`DNS_DATA/${name}`, text.trim());
    else if (name === 'HOST' && path[path.length - 2] === 'HOST_LIST') {
      // Every HOST of the list is a host the scan covered, with detections or not (docs/ingestion.md#rescans).
      this.scope.addScanner('Qualys');
      this.scope.addHost(detectionHost(this.host));
      this.host = null;
    }
  }

  private toDraft(d: RecordCollector, rawExcerpt: string): FindingDraft {
    const h = this.host!;
    const qid = firstField(d, 'QID');
    const type = (d.get('TYPE') ?? '').trim().toLowerCase();
    return {
      scanner: 'Qualys',
      ruleId: qid,
      title: firstField(d, 'TITLE') ?? `Qualys QID ${qid ?? '?'}`,
      severity: type === 'info' ? 'INFO' : severityFromQualys(d.get('SEVERITY')),
      cveIds: d.cveIds(),
      ...qualysCvssFields(
        d.get('CVSS_BASE') ?? d.get('CVSS_SCORE/CVSS_BASE'),
        d.get('CVSS3_BASE') ?? d.get('CVSS3_SCORE/CVSS3_BASE'),
      ),
      evidence: firstField(d, 'RESULTS', 'RESULT'),
      asset: { ...detectionHost(h), os: nonEmpty(h.get('OS')) },
      port: parsePort(d.get('PORT')),
      protocol: nonEmpty(d.get('PROTOCOL')),
      rawExcerpt,
    };
  }
}

/** A HOST of the list as its detections' asset names it. */
function detectionHost(h: Map<string, string>): {
  host: string | null;
  ip: string | null;
  fqdn: string | null;
} {
  const ip = h.get('IP') ?? h.get('IPV6') ?? null;
  return {
    host: nonEmpty(h.get('DNS')) ?? nonEmpty(h.get('NETBIOS')) ?? ip,
    ip: isIpAddress(ip) ? ip : null,
    fqdn: nonEmpty(h.get('DNS_DATA/FQDN')) ?? nonEmpty(h.get('DNS')),
  };
}
