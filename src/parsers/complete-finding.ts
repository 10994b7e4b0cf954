import { boundExcerpt } from './format-parser.js';
import { fingerprintFinding } from './fingerprint.js';
import type { Finding, FindingAsset, FindingDraft, ScanFormat } from './types.js';

function completeAsset(a: Partial<FindingAsset> | undefined): FindingAsset {
  return {
    host: a?.host ?? null,
    ip: a?.ip ?? null,
    fqdn: a?.fqdn ?? null,
    os: a?.os ?? null,
    component: a?.component ?? null,
    componentVersion: a?.componentVersion ?? null,
    purl: a?.purl ?? null,
    file: a?.file ?? null,
    line: a?.line ?? null,
  };
}

/**
 * Fills defaults, bounds the excerpt and computes the fingerprint (under the upload's asset for
 * a finding without a host, see `attributedAsset`). Every optional field becomes null (or [] /
 * false) so persistence sees one fixed shape whatever the format.
 */
export function completeFinding(
  draft: FindingDraft,
  format: ScanFormat,
  recordIndex: number,
  maxExcerptBytes: number,
  uploadAsset: string | null = null,
): Finding {
  const asset = completeAsset(draft.asset);
  const partial = {
    scanner: draft.scanner,
    ruleId: draft.ruleId ?? null,
    cveIds: draft.cveIds ?? [],
    title: draft.title,
    asset,
    port: draft.port ?? null,
    protocol: draft.protocol ?? null,
    producerFingerprints: draft.producerFingerprints ?? null,
  };
  return {
    recordIndex,
    fingerprint: fingerprintFinding({ ...partial, uploadAsset }),
    format,
    ...partial,
    severity: draft.severity,
    cweIds: draft.cweIds ?? [],
    cvssScore: draft.cvssScore ?? null,
    cvssVector: draft.cvssVector ?? null,
    cvssV3Score: draft.cvssV3Score ?? null,
    cvssV3Vector: draft.cvssV3Vector ?? null,
    cvssV2Score: draft.cvssV2Score ?? null,
    cvssV2Vector: draft.cvssV2Vector ?? null,
    description: draft.description ?? null,
    solution: draft.solution ?? null,
    evidence: draft.evidence ?? null,
    exploitAvailable: draft.exploitAvailable ?? null,
    confidence: draft.confidence ?? null,
    suppressed: draft.suppressed ?? false,
    rawExcerpt: boundExcerpt(draft.rawExcerpt ?? '', maxExcerptBytes),
  };
}
