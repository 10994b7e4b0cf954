import { CVE_ID, isIsoDate } from './formats.js';
import { malformed } from './import-error.js';

/** One row of `kev_entries`, validated from a CISA KEV catalog entry. */
export interface KevEntry {
  cveId: string;
  vendorProject: string | null;
  product: string | null;
  vulnerabilityName: string | null;
  /** YYYY-MM-DD */
  dateAdded: string;
  /** YYYY-MM-DD, absent in a few historical entries of other catalogs. */
  dueDate: string | null;
  /** `knownRansomwareCampaignUse` is `Known` (the feed's other value is `Unknown`). */
  knownRansomware: boolean;
}

/**
 * Validates one element of the catalog's `vulnerabilities` array. Unknown extra fields
 * (`notes`, `cwes`, ...) are ignored: CISA adds fields now and then, and they must not
 * break the daily refresh.
 */
export function parseKevEntry(raw: unknown, index: number): KevEntry {
  const where = `vulnerabilities[${index}]`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw malformed('not an object', where);
  const e = raw as Record<string, unknown>;
  const cveId = e.cveID;
  if (typeof cveId !== 'string' || !CVE_ID.test(cveId.trim())) {
    throw malformed(`cveID ${JSON.stringify(cveId)} is not a CVE id`, where);
  }
  const id = cveId.trim().toUpperCase();
  const at = `${where} (${id})`;
  const dateAdded = e.dateAdded;
  if (typeof dateAdded !== 'string' || !isIsoDate(dateAdded)) {
    throw malformed(`dateAdded ${JSON.stringify(dateAdded)} is not a YYYY-MM-DD date`, at);
  }
  const dueDate = e.dueDate ?? null;
  if (dueDate !== null && (typeof dueDate !== 'string' || !isIsoDate(dueDate))) {
    throw malformed(`dueDate ${JSON.stringify(dueDate)} is not a YYYY-MM-DD date`, at);
  }
  const ransomware = e.knownRansomwareCampaignUse ?? 'Unknown';
  if (typeof ransomware !== 'string') throw malformed('knownRansomwareCampaignUse is not a string', at);
  return {
    cveId: id,
    vendorProject: optionalText(e.vendorProject, 'vendorProject', at),
    product: optionalText(e.product, 'product', at),
    vulnerabilityName: optionalText(e.vulnerabilityName, 'vulnerabilityName', at),
    dateAdded,
    dueDate,
    knownRansomware: ransomware.trim().toLowerCase() === 'known',
  };
}

function optionalText(value: unknown, field: string, where: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw malformed(`${field} is not a string`, where);
  return value;
}
