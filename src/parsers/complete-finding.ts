import { boundExcerpt } from './format-parser.js';
import { fingerprintFinding } from './fingerprint.js';
import type { Finding } from './finding.js';
import type { ScanFormat } from './registry.js';
import { MAX_TITLE_BYTES, type FindingAsset, type FindingDraft, type ParseLimits } from './types.js';

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

const boundText = (text: string | null | undefined, maxBytes: number): string | null =>
  text == null ? null : boundExcerpt(text, maxBytes);

/**
 * Fills defaults, bounds the excerpt, the title and the long texts (`limits`), and computes the
 * fingerprint (under the upload's asset for a finding without a host, see `attributedAsset`). Every optional field becomes null (or [] /
 * false) so persistence sees one fixed shape whatever the format.
 */
export function completeFinding(
  draft: FindingDraft,
  format: ScanFormat,
  recordIndex: number,
  limits: Pick<ParseLimits, 'maxExcerptBytes' | 'maxFieldBytes'>,
  uploadAsset: string | null = null,
): Finding {
  const asset = completeAsset(draft.asset);
  const scanner = draft.scanner;
  const ruleId = draft.ruleId ?? null;
  const cveIds = draft.cveIds ?? [];
  const title = boundExcerpt(draft.title, MAX_TITLE_BYTES);
  const port = draft.port ?? null;
  const protocol = draft.protocol ?? null;
  const producerFingerprints = draft.producerFingerprints ?? null;
  // One literal in the stored key order, no spreads: object spreads were most of this function's
  // cost, which is paid once per finding (bench/parsers/README.md).
  return {
    recordIndex,
    fingerprint: fingerprintFinding({
      scanner,
      ruleId,
      cveIds,
      title,
      asset,
      port,
      protocol,
      producerFingerprints,
      uploadAsset,
    }),
    format,
    scanner,
    ruleId,
    cveIds,
    title,
    asset,
    port,
    protocol,
    producerFingerprints,
    severity: draft.severity,
    aliases: draft.aliases ?? [],
    cweIds: draft.cweIds ?? [],
    cvssScore: draft.cvssScore ?? null,
    cvssVector: draft.cvssVector ?? null,
    cvssV3Score: draft.cvssV3Score ?? null,
    cvssV3Vector: draft.cvssV3Vector ?? null,
    cvssV2Score: draft.cvssV2Score ?? null,
    cvssV2Vector: draft.cvssV2Vector ?? null,
    description: boundText(draft.description, limits.maxFieldBytes),
    solution: boundText(draft.solution, limits.maxFieldBytes),
    evidence: boundText(draft.evidence, limits.maxFieldBytes),
    exploitAvailable: draft.exploitAvailable ?? null,
    confidence: draft.confidence ?? null,
    suppressed: draft.suppressed ?? false,
    rawExcerpt: boundExcerpt(draft.rawExcerpt ?? '', limits.maxExcerptBytes),
  };
}
