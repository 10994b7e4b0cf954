import { CVE_ID } from './formats.js';
import { malformed } from './import-error.js';
import type { CisaSsvc } from './types.js';

/** CISA writes `poc`; the SSVC decision table names the value `public_poc`. */
const EXPLOITATION = { none: 'none', poc: 'public_poc', active: 'active' } as const;
const AUTOMATABLE = { no: 'no', yes: 'yes' } as const;
const TECHNICAL_IMPACT = { partial: 'partial', total: 'total' } as const;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Reads CISA's SSVC decision from a CVE JSON 5 record. Returns the CVE id with `null` when the
 * record carries no CISA SSVC metric (most CVEs: CISA scores what it enriches); throws a
 * `malformed` import error naming `where` when the record is not a CVE record or CISA's metric
 * holds a value outside the SSVC vocabulary. Other containers and fields are ignored.
 */
export function parseVulnrichmentRecord(
  raw: unknown,
  where: string,
): { cveId: string; ssvc: CisaSsvc | null } {
  if (!isObject(raw) || raw.dataType !== 'CVE_RECORD') throw malformed('not a CVE JSON 5 record', where);
  const meta = raw.cveMetadata;
  const cveId = isObject(meta) ? meta.cveId : undefined;
  if (typeof cveId !== 'string' || !CVE_ID.test(cveId)) {
    throw malformed(`cveMetadata.cveId ${JSON.stringify(cveId)} is not a CVE id`, where);
  }
  const containers = isObject(raw.containers) ? raw.containers : {};
  const adp = Array.isArray(containers.adp) ? containers.adp : [];
  for (const container of adp) {
    if (!isObject(container) || !Array.isArray(container.metrics)) continue;
    for (const metric of container.metrics) {
      const other = isObject(metric) ? metric.other : undefined;
      if (!isObject(other) || other.type !== 'ssvc' || !isObject(other.content)) continue;
      return { cveId: cveId.toUpperCase(), ssvc: readSsvc(other.content, `${where} (${cveId})`) };
    }
  }
  return { cveId: cveId.toUpperCase(), ssvc: null };
}

function readSsvc(content: Record<string, unknown>, where: string): CisaSsvc {
  const options: Record<string, unknown> = {};
  for (const o of Array.isArray(content.options) ? content.options : []) {
    if (isObject(o)) Object.assign(options, o);
  }
  const pick = <T>(name: string, vocabulary: Record<string, T>): T => {
    const value = options[name];
    const key = typeof value === 'string' ? value.toLowerCase() : '';
    const mapped = Object.hasOwn(vocabulary, key) ? vocabulary[key] : undefined;
    if (mapped === undefined) throw malformed(`SSVC "${name}" is ${JSON.stringify(value)}`, where);
    return mapped;
  };
  const scoredAt = typeof content.timestamp === 'string' ? new Date(content.timestamp) : null;
  if (scoredAt === null || Number.isNaN(scoredAt.getTime())) {
    throw malformed(`SSVC timestamp ${JSON.stringify(content.timestamp)} is not a date`, where);
  }
  return {
    exploitation: pick('Exploitation', EXPLOITATION),
    automatable: pick('Automatable', AUTOMATABLE),
    technicalImpact: pick('Technical Impact', TECHNICAL_IMPACT),
    version: typeof content.version === 'string' ? content.version : 'unknown',
    scoredAt,
  };
}
