import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type IPv4Range = ReturnType<ipaddr.IPv4['range']>;
type IPv6Range = ReturnType<ipaddr.IPv6['range']>;

/**
 * Requests to URLs chosen by customers (batch webhooks, workflow targets) must never reach our own
 * network: that would be server-side request forgery. Two checks, and both are needed:
 * - when the URL is accepted, {@link outboundUrlProblem} refuses anything that is not https, carries
 *   credentials, names a host by an address outside public unicast space, or uses a name that only
 *   means something inside a network (`localhost`, `*.internal`, single labels, ...);
 * - when we connect, {@link resolveAllowedAddresses} resolves the name and refuses if ANY address is
 *   outside public space, because a name can be re-pointed after acceptance (DNS rebinding). The
 *   caller must then connect to exactly those addresses ({@link pinnedLookup}), never resolving again;
 *   `outbound-request.ts` does both for every outbound request.
 *
 * Glossary: an address *class* is `public` or the reason it is not (`loopback`, `private`, ...).
 * `allowPrivateHosts` (setting `WEBHOOK_ALLOW_PRIVATE_HOSTS`, for local receivers in tests) admits the
 * classes of a private network and internal names; it never admits unspecified, multicast or
 * reserved addresses, which are not destinations at all.
 */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link_local'
  | 'unique_local'
  | 'unspecified'
  | 'multicast'
  | 'reserved'
  | 'invalid';

/** Classes that `allowPrivateHosts` admits. */
const PRIVATE_NETWORK = new Set<AddressClass>([
  'loopback',
  'private',
  'shared',
  'link_local',
  'unique_local',
]);

/**
 * ipaddr.js names every special-purpose range (the IANA registries); the names that carry a class
 * of their own map to it, every other special range (benchmarking, documentation, AS112, AMT,
 * Teredo, ORCHID, discard, ...) is `reserved`: it is not public unicast space.
 */
const IPV4_CLASSES: Partial<Record<IPv4Range, AddressClass>> = {
  unicast: 'public',
  unspecified: 'unspecified', // "this network": 0.0.0.0 connects to the local host
  private: 'private',
  carrierGradeNat: 'shared',
  loopback: 'loopback',
  linkLocal: 'link_local', // includes the cloud metadata service 169.254.169.254
  multicast: 'multicast',
};

const IPV6_CLASSES: Partial<Record<IPv6Range | 'deprecatedSiteLocal', AddressClass>> = {
  unspecified: 'unspecified',
  loopback: 'loopback',
  uniqueLocal: 'unique_local',
  linkLocal: 'link_local',
  deprecatedSiteLocal: 'private',
  multicast: 'multicast',
};

/** Classifies an IP address (IPv4 dotted quad or IPv6, brackets and zone allowed). */
export function classifyAddress(address: string): AddressClass {
  const ip = unbracket(address);
  // node's isIP is the gate: ipaddr.js also parses forms (`0x7f.1`, `127.1`) a socket never sees here.
  const version = isIP(ip.replace(/%.*$/, ''));
  if (version === 4) return classifyV4(ipaddr.IPv4.parse(ip));
  if (version !== 6) return 'invalid';
  const v6 = ipaddr.IPv6.parse(ip);
  const range = v6.range() as IPv6Range | 'deprecatedSiteLocal';
  // IPv4 carried inside IPv6 is classed as the IPv4 address it reaches.
  if (range === 'ipv4Mapped') return classifyV4(v6.toIPv4Address());
  if (range === '6to4') return classifyV4(v4From(v6.parts[1]!, v6.parts[2]!));
  if (range === 'rfc6052') {
    // 64:ff9b::/96 embeds an IPv4 address; local-use 64:ff9b:1::/48 translates inside a network.
    return v6.match(NAT64_WELL_KNOWN) ? classifyV4(v4From(v6.parts[6]!, v6.parts[7]!)) : 'private';
  }
  // Only 2000::/3 is allocated for global unicast; the rest (IPv4-compatible ::/96 among it) is not.
  if (range === 'unicast') return v6.match(GLOBAL_UNICAST) ? 'public' : 'reserved';
  return IPV6_CLASSES[range] ?? 'reserved';
}

const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

function classifyV4(ip: ipaddr.IPv4): AddressClass {
  return IPV4_CLASSES[ip.range()] ?? 'reserved';
}

function v4From(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** True when `allowPrivateHosts` lets us connect to an address of this class. */
export function isAllowedClass(cls: AddressClass, allowPrivateHosts = false): boolean {
  return cls === 'public' || (allowPrivateHosts && PRIVATE_NETWORK.has(cls));
}

/** Suffixes of names that resolve only inside a network (RFC 6761, 6762, 8375, ICANN's `.internal`). */
const INTERNAL_SUFFIXES = [
  'localhost',
  'local',
  'internal',
  'localdomain',
  'home.arpa',
  'lan',
  'intranet',
  'corp',
  'home',
];

/**
 * True for names that only mean something inside a network: `localhost` and the suffixes above, and
 * single-label names, which resolvers complete with search domains (`metadata`, `intranet`).
 */
export function isInternalHostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (!name.includes('.')) return true;
  return INTERNAL_SUFFIXES.some((s) => name === s || name.endsWith(`.${s}`));
}

/** Options of the outbound URL rule. */
export interface OutboundUrlOptions {
  /** Admit private-network addresses and internal names (local receivers). @defaultValue false */
  allowPrivateHosts?: boolean;
  /** Admit exactly `http://127.0.0.1[:port]/...` (local receivers in tests). @defaultValue false */
  allowLoopbackHttp?: boolean;
  /** @defaultValue 2048 */
  maxLength?: number;
}

/** Why a customer-supplied URL may not be called (the field error's message), or null when it may. */
export function outboundUrlProblem(value: string, options: OutboundUrlOptions = {}): string | null {
  if (value.length > (options.maxLength ?? 2048)) return 'must be an https URL';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an https URL';
  }
  if (url.protocol === 'http:' && options.allowLoopbackHttp === true && url.hostname === '127.0.0.1') {
    return url.username === '' && url.password === '' ? null : 'must not contain credentials';
  }
  if (url.protocol !== 'https:' || url.hostname === '') return 'must be an https URL';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  const host = unbracket(url.hostname);
  const allowPrivate = options.allowPrivateHosts === true;
  const ok =
    isIP(host) !== 0
      ? isAllowedClass(classifyAddress(host), allowPrivate)
      : allowPrivate || !isInternalHostName(host);
  return ok ? null : 'must not point to a private, loopback or internal host';
}

/** `URL#hostname` keeps the brackets of an IPv6 literal; sockets and `isIP` want it without. */
export function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** One address of a name, as `dns.lookup` with `all: true` returns it. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a name to all its addresses. @defaultValue `dns.lookup(name, { all: true, verbatim: true })` */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolve: ResolveHost = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export type AddressCheck =
  | { ok: true; addresses: ResolvedAddress[] }
  | { ok: false; reason: 'refused_address'; address: string; class: AddressClass }
  | { ok: false; reason: 'dns_error' };

/**
 * The addresses to connect to for `hostname` (a name or an IP literal): refused if ANY resolved
 * address is outside what the options allow, since the connection could be steered to any of them.
 */
export async function resolveAllowedAddresses(
  hostname: string,
  options: { allowPrivateHosts?: boolean; resolve?: ResolveHost } = {},
): Promise<AddressCheck> {
  const host = unbracket(hostname);
  let addresses: ResolvedAddress[];
  if (isIP(host) !== 0) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await (options.resolve ?? systemResolve)(host);
    } catch {
      return { ok: false, reason: 'dns_error' };
    }
    if (addresses.length === 0) return { ok: false, reason: 'dns_error' };
  }
  for (const { address } of addresses) {
    const cls = classifyAddress(address);
    if (!isAllowedClass(cls, options.allowPrivateHosts)) {
      return { ok: false, reason: 'refused_address', address, class: cls };
    }
  }
  return { ok: true, addresses };
}

/**
 * A socket `lookup` that answers with addresses already checked, so the connection goes to what
 * {@link resolveAllowedAddresses} approved and no second resolution can be rebound.
 */
export function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    const usable = addresses.filter((a) => family === 0 || a.family === family);
    if (usable.length === 0) {
      const err: NodeJS.ErrnoException = new Error('no checked address of the requested family');
      err.code = 'ENOTFOUND';
      callback(err, '', 0);
    } else if (options.all === true) {
      callback(null, usable);
    } else {
      callback(null, usable[0]!.address, usable[0]!.family);
    }
  };
}
