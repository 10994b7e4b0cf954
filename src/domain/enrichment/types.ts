/**
 * What the enrichment store knows about one CVE (docs/triage.md#enrichment). A CVE the store
 * has never heard of has no record at all: callers treat "absent" as "no signal",
 * never as "not exploited".
 */
export interface CveEnrichment {
  cveId: string;
  /** Listed in the CISA Known Exploited Vulnerabilities catalog. */
  kev: boolean;
  /** KEV `knownRansomwareCampaignUse` is `Known`. */
  kevRansomware: boolean;
  /** KEV `dateAdded` (YYYY-MM-DD), when listed. */
  kevDateAdded: string | null;
  /** KEV `dueDate` (YYYY-MM-DD), when listed. */
  kevDueDate: string | null;
  /** FIRST EPSS probability in [0, 1]. */
  epss: number | null;
  /** FIRST EPSS percentile in [0, 1]. */
  epssPercentile: number | null;
  /** The EPSS file's `score_date` (YYYY-MM-DD) the score is of, when the file named one. */
  epssDate: string | null;
  /** CVSS base score in [0, 10] from NVD, preferring Primary metrics, v4 > v3.1 > v3.0 > v2. */
  cvssScore: number | null;
  /** CVSS version of `cvssScore`: '4.0' | '3.1' | '3.0' | '2.0'. */
  cvssVersion: string | null;
  cvssVector: string | null;
  /** CISA's own SSVC decision points from its Vulnrichment records, when CISA scored the CVE. */
  cisaSsvc?: CisaSsvc | null;
}

/**
 * CISA's own SSVC decision points for one CVE, as its Vulnrichment program published them in the
 * "CISA ADP Vulnrichment" container of the CVE JSON 5 record (docs/triage.md#enrichment). Values
 * are the SSVC decision table's. Mission & well-being is the deployer's to judge, so CISA gives
 * three of the four points.
 */
export interface CisaSsvc {
  exploitation: 'none' | 'public_poc' | 'active';
  automatable: 'no' | 'yes';
  technicalImpact: 'partial' | 'total';
  /** The SSVC version CISA scored with (e.g. `2.0.3`). */
  version: string;
  /** When CISA scored it (the ssvc metric's own `timestamp`). */
  scoredAt: Date;
}

/** Looks up enrichment for many CVEs at once; unknown CVEs are simply missing from the map. */
export type EnrichmentLookup = (cveIds: readonly string[]) => Promise<Map<string, CveEnrichment>>;
