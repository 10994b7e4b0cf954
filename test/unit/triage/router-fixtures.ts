/** Chain and requests shared by the router tests. */
import type { ChainTier, Provider, TriageRequest } from '../../../src/domain/triage-engine/types.js';
import { enrichment, enrichmentMap } from './enrichment-fixtures.js';

export const CVE = 'CVE-2023-4966';
export const routineReq: TriageRequest = { cveIds: [CVE], title: 'Citrix Bleed', severity: 'MEDIUM' };
export const chain: ChainTier[] = [
  { tier: 'routine', provider: 'fast', model: 'fast-mini', billedAs: 'svc-triage-routine' },
  { tier: 'escalated-1', provider: 'big', model: 'big-1', billedAs: 'svc-triage-v1' },
  { tier: 'escalated-2', provider: 'bigger', model: 'bigger-2', billedAs: 'svc-triage-v1' },
];
export const quiet = enrichmentMap(enrichment(CVE, { epss: 0.01, cvssScore: 5.3 }));

export function providers(fast: Provider, big: Provider, bigger: Provider) {
  return { fast, big, bigger };
}
