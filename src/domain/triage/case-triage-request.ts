import type {
  AssetCriticality,
  AssetEnvironment,
  Severity,
  TriageAsset,
  TriageRequest,
} from '../triage-engine/types.js';
import { ASSET_CRITICALITIES, ASSET_ENVIRONMENTS, SEVERITIES } from '../triage-engine/types.js';
import { TRIAGE_REQUEST_LIMITS as L } from './triage-requests.js';
import type { CaseTriageSource } from '../cases/case-triage-source.js';

/**
 * The triage request of a case (docs/cases.md#triage-on-a-case: "built from its normalised fields and the asset
 * context of its scan"). Pure, so the mapping the README documents is tested field by field.
 *
 * Mapping:
 * - `cveIds`: the case's CVEs, upper-cased, deduplicated, malformed ones dropped, at most 100;
 * - `title`, `severity`: the case's (the title cut to 500 characters);
 * - `description`: the newest sighting's, cut to {@link CASE_DESCRIPTION_MAX} characters; a case
 *   with neither CVEs nor description is described by its title (a request needs one of them);
 * - `cvssScore`: the case's CVSS base score; `cvssVector`: the newest sighting's;
 * - `asset.name`: the asset context of the scan (the upload's `asset=`), else the finding's host,
 *   FQDN, IP, component, or the case's asset label, the first present;
 * - `asset.type`: `HOST` when the case has a host, FQDN or IP, `APPLICATION` when it only names a
 *   component, else absent;
 * - `asset.environment`, `criticality`, `internetExposed`: the scan's asset context, when given.
 */

/** Longest description a case's request carries: enough for the models, well inside the input-token `max`. */
export const CASE_DESCRIPTION_MAX = 4_000;

const CVE = /^CVE-\d{4}-\d{4,}$/;

/** The triage request of a case; see the module header for the mapping. */
export function caseTriageRequest(c: CaseTriageSource): TriageRequest {
  const cveIds = [...new Set(c.cveIds.map((id) => id.trim().toUpperCase()))]
    .filter((id) => id.length <= L.cveIdMaxLength && CVE.test(id))
    .slice(0, L.cveIdsMaxItems);
  const title = cut(c.title.trim(), L.titleMaxLength) || 'Untitled finding';
  const severity = (SEVERITIES as readonly string[]).includes(c.severity) ? (c.severity as Severity) : 'INFO';
  const request: TriageRequest = { cveIds, title, severity };
  const description = c.description?.trim() ? cut(c.description.trim(), CASE_DESCRIPTION_MAX) : null;
  if (description) request.description = description;
  else if (cveIds.length === 0) request.description = title;
  const score = c.cvssScore === null ? NaN : Number(c.cvssScore);
  if (Number.isFinite(score) && score >= 0 && score <= 10) request.cvssScore = score;
  const vector = c.cvssVector?.trim();
  if (vector && vector.length <= L.cvssVectorMaxLength) request.cvssVector = vector;
  const asset = caseAsset(c);
  if (Object.keys(asset).length > 0) request.asset = asset;
  return request;
}

function caseAsset(c: CaseTriageSource): TriageAsset {
  const asset: TriageAsset = {};
  const name = [c.context?.name, c.host, c.fqdn, c.ip, c.component, c.asset]
    .map((v) => v?.trim())
    .find((v): v is string => !!v);
  if (name) asset.name = cut(name, L.assetNameMaxLength);
  if (c.host || c.fqdn || c.ip) asset.type = 'HOST';
  else if (c.component) asset.type = 'APPLICATION';
  const ctx = c.context;
  if (ctx?.environment && (ASSET_ENVIRONMENTS as readonly string[]).includes(ctx.environment))
    asset.environment = ctx.environment as AssetEnvironment;
  if (ctx?.criticality && (ASSET_CRITICALITIES as readonly string[]).includes(ctx.criticality))
    asset.criticality = ctx.criticality as AssetCriticality;
  if (ctx?.internetExposed !== null && ctx?.internetExposed !== undefined)
    asset.internetExposed = ctx.internetExposed;
  return asset;
}

/** At most `max` UTF-16 units, never splitting a surrogate pair. */
function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  const end = /[\uD800-\uDBFF]/.test(s[max - 1]!) ? max - 1 : max;
  return s.slice(0, end);
}
