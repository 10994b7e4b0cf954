import { ownOrNull, ownString } from './own-string.js';
import type { FindingAsset } from './types.js';

/**
 * What a scan file says it covered (docs/ingestion.md#rescans): the scanners that produced it,
 * the hosts a network scan looked at (those with findings and, where the format lists them,
 * those without), and for files without hosts the subject the file names (a SARIF run's
 * `versionControlProvenance` repository, a CycloneDX `metadata.component`). A rescan resolves
 * what it no longer sees within this scope only.
 */

/** A host as a finding's asset names it; its identity is ip, then FQDN, then host name. */
export interface ScopeHost {
  ip: string | null;
  fqdn: string | null;
  host: string | null;
}

/** The scope a parse reports in its result. */
export interface ScanScope {
  /** Scanner names, as findings carry them, including those of runs without findings. */
  scanners: string[];
  /** Hosts covered, one per identity; empty when there were more than {@link MAX_SCOPE_HOSTS}. */
  hosts: ScopeHost[];
  /** True when the file listed more than {@link MAX_SCOPE_HOSTS} hosts (none are kept). */
  tooManyHosts: boolean;
  /** The subjects the file names for its hostless findings, distinct, in first-seen order. */
  subjects: string[];
}

/** Hosts kept per scan: beyond this, a rescan resolves nothing by host (and says so). */
export const MAX_SCOPE_HOSTS = 100_000;
/** Longest subject kept (a repository URI, a package URL). */
const MAX_SUBJECT_CHARS = 1_000;
const MAX_SUBJECTS = 16;
const MAX_SCANNERS = 64;

const clean = (v: string | null | undefined): string | null => {
  const t = v?.trim();
  return t ? t : null;
};

/** The identity of a host: the same order as a finding's asset key (ip, FQDN, host name). */
export function hostIdentity(h: ScopeHost): string | null {
  const ip = clean(h.ip);
  if (ip) return `ip:${ip.toLowerCase()}`;
  const fqdn = clean(h.fqdn);
  if (fqdn) return `host:${fqdn.toLowerCase()}`;
  const host = clean(h.host);
  return host ? `host:${host.toLowerCase()}` : null;
}

/** Collects a parse's scope; parsers add what only they know, the parse adds each finding's. */
export class ScopeCollector {
  private readonly scanners = new Set<string>();
  private readonly hosts = new Map<string, ScopeHost>();
  private readonly subjects = new Set<string>();
  private tooManyHosts = false;
  private last: { scanner: string; ip: string | null; fqdn: string | null; host: string | null } | null =
    null;

  addScanner(name: string | null | undefined): void {
    const n = clean(name);
    if (n && this.scanners.size < MAX_SCANNERS && !this.scanners.has(n)) this.scanners.add(ownString(n));
  }

  addHost(h: Partial<ScopeHost>): void {
    if (this.tooManyHosts) return;
    const host = { ip: clean(h.ip), fqdn: clean(h.fqdn), host: clean(h.host) };
    const id = hostIdentity(host);
    if (id === null || this.hosts.has(id)) return;
    if (this.hosts.size >= MAX_SCOPE_HOSTS) {
      this.tooManyHosts = true;
      this.hosts.clear();
      return;
    }
    // Kept for the whole parse: copies, not slices of the chunk each came from (the key too: it
    // is a concatenation that points at the slice).
    this.hosts.set(ownString(id), {
      ip: ownOrNull(host.ip),
      fqdn: ownOrNull(host.fqdn),
      host: ownOrNull(host.host),
    });
  }

  addSubject(subject: string | null | undefined): void {
    const s = clean(subject);
    if (s && s.length <= MAX_SUBJECT_CHARS && this.subjects.size < MAX_SUBJECTS && !this.subjects.has(s))
      this.subjects.add(ownString(s));
  }

  /** A finding's scanner and, when it names one, its host. */
  addFinding(f: { scanner: string; asset: FindingAsset }): void {
    // Findings come grouped by host and scanner: adding the previous finding's again changes
    // nothing, so only a change of strings is looked at (once per finding, every format).
    const a = f.asset;
    const last = this.last;
    if (
      last &&
      last.scanner === f.scanner &&
      last.ip === a.ip &&
      last.fqdn === a.fqdn &&
      last.host === a.host
    )
      return;
    this.last = { scanner: f.scanner, ip: a.ip, fqdn: a.fqdn, host: a.host };
    this.addScanner(f.scanner);
    if (a.ip || a.fqdn || a.host) this.addHost(a);
  }

  result(): ScanScope {
    return {
      scanners: [...this.scanners],
      hosts: [...this.hosts.values()],
      tooManyHosts: this.tooManyHosts,
      subjects: [...this.subjects],
    };
  }
}
