import type { Registry } from 'prom-client';
import type { ModelCatalogEntry } from '../../lib/config.js';
import type { TriageObserver } from '../../domain/triage/triage-service.js';
import type { RouteTriageResult } from '../../domain/triage-engine/router.js';
import { catalogModel, costMicros } from '../../domain/triage/pricing.js';
import { metricKit } from './metric-kit.js';

/**
 * Triage metrics from each routed request's hops (docs/triage.md#request-and-answer): who answered, why the walk went
 * up, how long each provider took, what failed, and the tokens and spend per tier. Spend is
 * our cost at catalog prices (micro-dollars), counted for every hop that used tokens, answered
 * or not: the number an operator compares with the providers' invoices.
 */
export function createTriageMetrics(
  registry: Registry,
  catalog: readonly ModelCatalogEntry[],
): TriageObserver {
  const { counter, histogram } = metricKit(registry);
  const answers = counter(
    'vuln_triage_triage_answers_total',
    'Triage requests answered, by the tier and provider whose answer stood (policy: the safety policy alone).',
    ['tier', 'provider'],
  );
  const unavailable = counter(
    'vuln_triage_triage_unavailable_total',
    'Triage requests no tier could answer (503 triage_unavailable, or overloaded when every tier was at its rate limit).',
  );
  const escalations = counter(
    'vuln_triage_triage_escalations_total',
    'Hops after which the router went one tier up, by reason.',
    ['reason'],
  );
  const latency = histogram(
    'vuln_triage_provider_latency_seconds',
    'Time of one provider call (one hop), by provider, tier and outcome.',
    ['provider', 'tier', 'outcome'],
    [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  );
  const errors = counter(
    'vuln_triage_provider_errors_total',
    'Provider calls that failed, by provider and error kind.',
    ['provider', 'kind'],
  );
  const tokens = counter(
    'vuln_triage_triage_tokens_total',
    'Model tokens used, by tier and direction (input or output).',
    ['tier', 'direction'],
  );
  const spend = counter(
    'vuln_triage_triage_spend_micro_dollars_total',
    'Cost of the tokens used at catalog prices, in micro-dollars, by tier.',
    ['tier'],
  );

  function priceOf(billedAs: string, input: number, output: number): number {
    try {
      return costMicros(input, output, catalogModel(catalog, billedAs));
    } catch {
      return 0; // a model missing from the catalog: the ledger reports it, metrics must not throw
    }
  }

  return {
    routed(result: RouteTriageResult) {
      for (const hop of result.hops) {
        latency.observe(
          { provider: hop.provider, tier: hop.tier, outcome: hop.outcome },
          hop.latencyMs / 1000,
        );
        if (hop.errorKind) errors.inc({ provider: hop.provider, kind: hop.errorKind });
        if (hop.escalationReason) escalations.inc({ reason: hop.escalationReason });
        if (hop.inputTokens > 0) tokens.inc({ tier: hop.tier, direction: 'input' }, hop.inputTokens);
        if (hop.outputTokens > 0) tokens.inc({ tier: hop.tier, direction: 'output' }, hop.outputTokens);
        const micros = priceOf(hop.billedAs, hop.inputTokens, hop.outputTokens);
        if (micros > 0) spend.inc({ tier: hop.tier }, micros);
      }
      if (result.ok) answers.inc({ tier: result.servedBy.tier, provider: result.servedBy.provider });
      else unavailable.inc();
    },
  };
}
