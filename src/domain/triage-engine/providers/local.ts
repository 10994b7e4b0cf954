/**
 * `local`: the deterministic triage engine that needs no network (docs/triage.md#providers). It decides with
 * the CISA SSVC 2.0.3 tree over the same signals the safety policy uses, explains itself in plain
 * words, and reports a confidence that grows with the evidence it had. Its token usage is counted
 * with gpt-tokenizer over the exact prompt a model would have read and the answer it wrote, so
 * usage and billing look the same whichever engine served a tier.
 */
import { countTokens } from 'gpt-tokenizer';
import { ACTION_WORDS, SEVERITY_RANK, maxSeverity, ssvcBaseline } from '../baseline.js';
import { cisaCitation, deriveSignals, type RiskSignals } from '../signals.js';
import { SSVC_TREE_VERSION } from '../ssvc.js';
import type {
  Provider,
  ProviderInput,
  ProviderResult,
  Severity,
  TriageAnswer,
  TriageRequest,
} from '../types.js';

/** Default model name, reported as `local:ssvc-2.0.3`. */
export const LOCAL_MODEL = `ssvc-${SSVC_TREE_VERSION}`;

/**
 * Confidence from evidence: 0.4 with nothing but the finding's own words, plus a weight for each
 * kind of signal present, capped at 0.95 (a rule engine is never certain). With a known CVE,
 * its EPSS and CVSS, and an asset's criticality the engine clears the router's 0.7 threshold;
 * a description-only finding does not, and goes up the chain when a model is configured.
 */
export function localConfidence(request: TriageRequest, s: RiskSignals): number {
  let c = 0.4;
  if (s.records.length > 0) c += 0.15;
  if (s.kev) c += 0.1;
  if (s.maxEpss !== null) c += 0.1;
  if (s.cvssScore !== null) c += 0.1;
  if (s.cvssVector !== null) c += 0.05;
  if (s.cisa !== null) c += 0.1;
  if (request.asset?.criticality !== undefined) c += 0.1;
  if (request.asset?.internetExposed !== undefined) c += 0.05;
  return Math.round(Math.min(0.95, c) * 100) / 100;
}

function cvssBand(score: number): Severity {
  if (score >= 9) return 'CRITICAL';
  if (score >= 7) return 'HIGH';
  if (score >= 4) return 'MEDIUM';
  return score > 0 ? 'LOW' : 'INFO';
}

/** Proposes only upgrades: the scanner's severity may carry context the engine cannot see. */
function severityOverride(request: TriageRequest, s: RiskSignals): Severity | null {
  let proposed: Severity = request.severity;
  if (s.cvssScore !== null) proposed = maxSeverity(proposed, cvssBand(s.cvssScore));
  if (s.kev) proposed = maxSeverity(proposed, 'HIGH');
  return SEVERITY_RANK[proposed] > SEVERITY_RANK[request.severity] ? proposed : null;
}

function explain(
  request: TriageRequest,
  s: RiskSignals,
  answer: Pick<TriageAnswer, 'recommendedAction'>,
): string {
  const cves = request.cveIds?.length ? request.cveIds.join(', ') : 'This finding';
  const parts: string[] = [];
  if (s.records.length === 0)
    parts.push(`${cves} has no KEV, EPSS or CVSS record, so the decision rests on the submitted details.`);
  else if (s.kev)
    parts.push(
      `${cves} is in CISA's Known Exploited Vulnerabilities catalog${s.kevRansomware ? ', with known ransomware use' : ''}.`,
    );
  else parts.push(`${cves} is not in CISA's Known Exploited Vulnerabilities catalog.`);
  if (s.maxEpss !== null) {
    const likely =
      s.maxEpss >= 0.1 ? 'which makes exploitation likely soon' : 'which makes exploitation unlikely soon';
    parts.push(`Its EPSS score is ${s.maxEpss.toFixed(3)}, ${likely}.`);
  }
  if (s.cisa !== null) {
    const c = s.cisa;
    parts.push(
      `CISA rated ${c.cves.join(', ')}: exploitation ${c.exploitation === 'public_poc' ? 'poc' : c.exploitation}, ` +
        `automatable ${c.automatable}, technical impact ${c.technicalImpact} ${cisaCitation(c)}.`,
    );
  } else if (s.cvssScore !== null) {
    const auto =
      s.ssvc.automatable === 'yes'
        ? 'attacks can be automated'
        : 'attacks need more than a scripted network request';
    const impact =
      s.ssvc.technicalImpact === 'total' ? 'a successful attack gives full control' : 'the impact is partial';
    parts.push(`CVSS ${s.cvssScore.toFixed(1)}: ${auto}, and ${impact}.`);
  }
  const a = request.asset;
  if (a !== undefined) {
    const where = [
      a.internetExposed ? 'internet-exposed' : a.internetExposed === false ? 'internal' : null,
      a.environment?.toLowerCase(),
      a.criticality ? `${a.criticality.toLowerCase()}-criticality` : null,
    ]
      .filter(Boolean)
      .join(' ');
    if (where) parts.push(`The asset is ${where}, so the mission impact is ${s.ssvc.missionWellbeing}.`);
  }
  parts.push(
    `SSVC ${SSVC_TREE_VERSION} decision: ${s.decision}; recommended: ${ACTION_WORDS[answer.recommendedAction]}.`,
  );
  return parts.join(' ');
}

/** Computes the local engine's answer; pure. */
export function localAnswer(request: TriageRequest, enrichment: ProviderInput['enrichment']): TriageAnswer {
  const s = deriveSignals(request, enrichment);
  const base = ssvcBaseline(s.decision, request.severity);
  return {
    priority: base.priority,
    recommendedAction: base.action,
    reasoning: explain(request, s, { recommendedAction: base.action }),
    confidenceScore: localConfidence(request, s),
    severityOverride: severityOverride(request, s),
  };
}

/** Creates the local provider. `model` in the input is reported back unchanged in usage only. */
export function createLocalProvider(name = 'local'): Provider {
  return {
    name,
    inProcess: true,
    triage(input: ProviderInput): Promise<ProviderResult> {
      const answer = localAnswer(input.request, input.enrichment);
      const usage = {
        inputTokens: input.prompt.inputTokens,
        outputTokens: countTokens(JSON.stringify(answer)),
      };
      return Promise.resolve({
        ok: true,
        answer,
        usage,
        raw: { engine: 'ssvc', treeVersion: SSVC_TREE_VERSION },
      });
    },
  };
}
