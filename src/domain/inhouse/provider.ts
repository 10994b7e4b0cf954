import { cisaCitation, deriveSignals } from '../triage-engine/signals.js';
import type {
  Provider,
  ProviderInput,
  ProviderResult,
  TriageRequest,
  EnrichmentMap,
} from '../triage-engine/types.js';
import { modelText } from './features.js';
import { inhouseTriage } from './model.js';
import type { InhouseAnswer, InhouseModel, InhouseTriageInput } from './model.js';

/** Provider id of the in-house model in `model` (`inhouse:<model_name>`) and in the chain config. */
export const INHOUSE_PROVIDER = 'inhouse';

/**
 * The model's input for a request: KEV, CVSS score and vector, and mission & well-being
 * come from the same `deriveSignals` the router, policy and local engine use (the
 * request's own CVSS wins over stored scores); text is `modelText` of the description (the title
 * when there is none), the transformation training applied to the labelled descriptions.
 */
export function inhouseInputFromRequest(
  request: TriageRequest,
  enrichment: EnrichmentMap,
): InhouseTriageInput {
  const s = deriveSignals(request, enrichment);
  return {
    kev: s.kev,
    cvssScore: s.cvssScore,
    cvssVector: s.cvssVector,
    text: modelText(request.description, request.title),
    cve: request.cveIds?.[0] ?? null,
    mission: s.ssvc.missionWellbeing,
    ...(s.cisa !== null
      ? {
          given: {
            exploitation: s.ssvc.exploitation,
            automatable: s.ssvc.automatable,
            technicalImpact: s.ssvc.technicalImpact,
            label: cisaCitation(s.cisa),
          },
        }
      : {}),
  };
}

/** Triage a request with the in-house model; the full answer (with decision points) for shadow storage. */
export function inhouseTriageRequest(
  model: InhouseModel,
  request: TriageRequest,
  enrichment: EnrichmentMap,
): InhouseAnswer {
  return inhouseTriage(model, inhouseInputFromRequest(request, enrichment));
}

/**
 * The in-house model as a triage `Provider`. Whether its answers are returned or only
 * stored is the router's decision via `inhouseMode` (shadow.ts), not the provider's.
 * It needs no network and uses no tokens; `input.model` is ignored (one model per file).
 */
export function createInhouseProvider(model: InhouseModel): Provider {
  return {
    name: INHOUSE_PROVIDER,
    inProcess: true,
    triage(input: ProviderInput): Promise<ProviderResult> {
      try {
        const a = inhouseTriageRequest(model, input.request, input.enrichment);
        return Promise.resolve({
          ok: true,
          answer: {
            priority: a.priority,
            recommendedAction: a.recommendedAction,
            reasoning: a.reasoning,
            confidenceScore: a.confidenceScore,
            // The model judges priority, not the scanner's severity; it never proposes one.
            severityOverride: null,
          },
          usage: { inputTokens: 0, outputTokens: 0 },
          raw: a,
        });
      } catch (err) {
        return Promise.resolve({
          ok: false,
          error: {
            kind: 'bad_response',
            retryable: false,
            message: `in-house model: ${(err as Error).message}`,
          },
        });
      }
    },
  };
}
