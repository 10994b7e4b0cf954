import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isIP, isIPv6 } from 'node:net';

/**
 * Requests to URLs chosen by customers (batch webhooks, DECISIONS §7) must never reach our own
 * network: that would be server-side request forgery. Two checks, and both are needed:
 * - when the URL is accepted, {@link outboundUrlProblem} refuses anything that is not https, carries
 *   credentials, names a host by an address outside public unicast space, or uses a name that only
 *   means something inside a network (`localhost`, `*.internal`, single labels, ...);
 * - when we connect, {@link resolveAllowedAddresses} resolves the name and refuses if ANY address is
 *   outside public space, because a name can be re-pointed after acceptance (DNS rebinding). The
 *   caller must then connect to exactly those addresses ({@link pinnedLookup}), never resolving again.
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

/** First match wins (IANA IPv4 Special-Purpose Address Registry). */
const IPV4_RANGE_TEXT: readonly [string, number, AddressClass][] = [
  ['0.0.0.0', 8, 'unspecified'], // "this network": 0.0.0.0 connects to the local host
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared'], // carrier-grade NAT
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link_local'], // includes the cloud metadata service 169.254.169.254
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // includes broadcast 255.255.255.255
];
const IPV4_RANGES = IPV4_RANGE_TEXT.map(([base, bits, cls]) => [BigInt(parseV4(base)), bits, cls] as const);

/** `embedded`: the range carries an IPv4 address in bits 96..127 (or 16..47 for 6to4), classed as such. */
const IPV6_RANGE_TEXT: readonly [string, number, AddressClass | 'embedded' | 'embedded_6to4'][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['::ffff:0:0', 96, 'embedded'], // IPv4-mapped
  ['64:ff9b::', 96, 'embedded'], // NAT64 well-known prefix
  ['64:ff9b:1::', 48, 'private'], // local-use NAT64
  ['fc00::', 7, 'unique_local'],
  ['fe80::', 10, 'link_local'],
  ['fec0::', 10, 'private'], // deprecated site-local
  ['ff00::', 8, 'multicast'],
  ['2001::', 23, 'reserved'], // IETF protocol assignments, Teredo
  ['2001:db8::', 32, 'reserved'],
  ['2002::', 16, 'embedded_6to4'],
  ['3fff::', 20, 'reserved'],
];
const IPV6_RANGES = IPV6_RANGE_TEXT.map(([prefix, bits, cls]) => [parseV6(prefix)!, bits, cls] as const);

/** Classifies an IP address (IPv4 dotted quad or IPv6, brackets and zone allowed). */
export function classifyAddress(address: string): AddressClass {
  const ip = unbracket(address);
  if (isIP(ip) === 4) return classifyV4(parseV4(ip));
  const v6 = parseV6(ip);
  if (v6 === null) return 'invalid';
  for (const [prefix, bits, cls] of IPV6_RANGES) {
    if (!inPrefix(v6, prefix, bits, 128)) continue;
    if (cls === 'embedded') return classifyV4(Number(v6 & 0xffffffffn));
    if (cls === 'embedded_6to4') return classifyV4(Number((v6 >> 80n) & 0xffffffffn));
    return cls;
  }
  // Only 2000::/3 is allocated for global unicast; the rest (IPv4-compatible ::/96 among it) is not.
  return inPrefix(v6, 0x2n << 124n, 3, 128) ? 'public' : 'reserved';
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

function parseV4(ip: string): number {
  return ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

function classifyV4(n: number): AddressClass {
  for (const [base, bits, cls] of IPV4_RANGES) {
    if (inPrefix(BigInt(n), base, bits, 32)) return cls;
  }
  return 'public';
}

/** IPv6 text (with `::`, a dotted IPv4 tail or a zone) to a 128-bit integer; null if not IPv6. */
function parseV6(address: string): bigint | null {
  const ip = address.toLowerCase().replace(/%.*$/, '');
  if (!isIPv6(ip)) return null;
  let text = ip;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseV4(tail);
    text = `${text.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const groups =
    rest === undefined
      ? left
      : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function inPrefix(value: bigint, base: bigint, bits: number, width: number): boolean {
  const shift = BigInt(width - bits);
  return value >> shift === base >> shift;
}
