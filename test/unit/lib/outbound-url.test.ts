import { describe, expect, it } from 'vitest';
import {
  classifyAddress,
  isAllowedClass,
  isInternalHostName,
  outboundUrlProblem,
  pinnedLookup,
  resolveAllowedAddresses,
  type ResolvedAddress,
} from '../../../src/lib/outbound-url.js';

describe('classifyAddress', () => {
  it.each([
    // IPv4
    ['8.8.8.8', 'public'],
    ['93.184.215.14', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['11.0.0.1', 'public'],
    ['100.64.0.1', 'shared'],
    ['100.128.0.1', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link_local'],
    ['172.15.255.255', 'public'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    // special-purpose ranges without a class of their own are not public unicast space
    ['192.175.48.1', 'reserved'], // AS112 DNS sinks
    ['192.52.193.1', 'reserved'], // AMT relays
    // IPv6
    ['2606:4700::1111', 'public'],
    ['2001:4860:4860::8888', 'public'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456::1', 'unique_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['2001::1', 'reserved'],
    ['100::1', 'reserved'],
    ['::7f00:1', 'reserved'], // IPv4-compatible, deprecated
    ['4000::1', 'reserved'],
    ['2620:4f:8000::1', 'reserved'], // AS112 DNS sinks
    ['2001:3::1', 'reserved'], // AMT
    ['5f00::1', 'reserved'], // segment routing
    ['100::1:2', 'reserved'], // discard-only
    // IPv4 inside IPv6: classed as the IPv4 address
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link_local'],
    ['::ffff:a9fe:a9fe', 'link_local'],
    ['::FFFF:10.0.0.1', 'private'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::a9fe:a9fe', 'link_local'],
    ['64:ff9b::808:808', 'public'],
    ['64:ff9b:1::1', 'private'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:0808:0808::1', 'public'],
    // not addresses
    ['localhost', 'invalid'],
    ['1.2.3', 'invalid'],
    ['::ffff:1.2.3.256', 'invalid'],
  ])('%s is %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
  });

  it.each([
    ['public', false, true],
    ['loopback', false, false],
    ['loopback', true, true],
    ['private', true, true],
    ['link_local', true, true],
    ['unique_local', true, true],
    ['shared', true, true],
    ['unspecified', true, false],
    ['multicast', true, false],
    ['reserved', true, false],
    ['invalid', true, false],
  ] as const)('class %s with allowPrivateHosts=%s is allowed: %s', (cls, allowPrivate, ok) => {
    expect(isAllowedClass(cls, allowPrivate)).toBe(ok);
  });
});

describe('isInternalHostName', () => {
  it.each([
    ['localhost', true],
    ['LOCALHOST.', true],
    ['api.localhost', true],
    ['metadata.google.internal', true],
    ['printer.local', true],
    ['nas.home.arpa', true],
    ['box.localdomain', true],
    ['metadata', true],
    ['hooks.example.com', false],
    ['localhost.example.com', false],
    ['internal.example.com', false],
    ['ci.example', false],
  ])('%s → %s', (name, internal) => {
    expect(isInternalHostName(name)).toBe(internal);
  });
});

describe('outboundUrlProblem', () => {
  const HOST = 'must not point to a private, loopback or internal host';
  it.each([
    ['https://hooks.example.com/a?b=c', {}, null],
    ['https://hooks.example.com:8443/a', {}, null],
    ['https://8.8.8.8/hook', {}, null],
    ['https://[2606:4700::1111]/hook', {}, null],
    ['http://hooks.example.com/', {}, 'must be an https URL'],
    ['not a url', {}, 'must be an https URL'],
    ['file:///etc/passwd', {}, 'must be an https URL'],
    ['https://user:pass@hooks.example.com/', {}, 'must not contain credentials'],
    ['https://:pass@hooks.example.com/', {}, 'must not contain credentials'],
    ['https://169.254.169.254/latest/meta-data/', {}, HOST],
    ['https://[::ffff:169.254.169.254]/', {}, HOST],
    ['https://0x7f.1/', {}, HOST], // the URL parser normalises it to 127.0.0.1
    ['https://017700000001/', {}, HOST],
    ['https://0.0.0.0/', {}, HOST],
    ['https://[::]/', {}, HOST],
    ['https://[fe80::1]/', {}, HOST],
    ['https://localhost/', {}, HOST],
    ['https://localhost./', {}, HOST],
    ['https://svc.cluster.internal/', {}, HOST],
    ['http://127.0.0.1:9000/hook', { allowLoopbackHttp: true }, null],
    ['http://u:p@127.0.0.1:9000/hook', { allowLoopbackHttp: true }, 'must not contain credentials'],
    ['http://127.0.0.2/hook', { allowLoopbackHttp: true }, 'must be an https URL'],
    ['https://127.0.0.1/hook', { allowLoopbackHttp: true }, HOST],
    ['https://127.0.0.1/hook', { allowPrivateHosts: true }, null],
    ['https://localhost/hook', { allowPrivateHosts: true }, null],
    ['https://224.0.0.1/hook', { allowPrivateHosts: true }, HOST],
    ['http://10.0.0.1/hook', { allowPrivateHosts: true }, 'must be an https URL'],
    [`https://hooks.example.com/${'a'.repeat(2048)}`, {}, 'must be an https URL'],
  ])('%s with %j → %s', (url, options, problem) => {
    expect(outboundUrlProblem(url, options)).toBe(problem);
  });
});

describe('resolveAllowedAddresses', () => {
  const resolver = (table: Record<string, string[]>) => async (name: string) => {
    const found = table[name];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const resolve = resolver({
    'public.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    'rebound.example.com': ['93.184.215.14', '127.0.0.1'],
    'mapped.example.com': ['::ffff:169.254.169.254'],
    'loopback.example.com': ['127.0.0.1'],
    'empty.example.com': [],
  });

  it('returns every address of a public name', async () => {
    expect(await resolveAllowedAddresses('public.example.com', { resolve })).toEqual({
      ok: true,
      addresses: [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
      ],
    });
  });

  it('refuses a name when ANY of its addresses is not public', async () => {
    expect(await resolveAllowedAddresses('rebound.example.com', { resolve })).toEqual({
      ok: false,
      reason: 'refused_address',
      address: '127.0.0.1',
      class: 'loopback',
    });
    expect(await resolveAllowedAddresses('mapped.example.com', { resolve })).toMatchObject({
      ok: false,
      class: 'link_local',
    });
  });

  it('admits private addresses only with allowPrivateHosts', async () => {
    expect(
      await resolveAllowedAddresses('loopback.example.com', { resolve, allowPrivateHosts: true }),
    ).toEqual({
      ok: true,
      addresses: [{ address: '127.0.0.1', family: 4 }],
    });
  });

  it('checks an IP literal without resolving it', async () => {
    const never = async () => {
      throw new Error('must not resolve');
    };
    expect(await resolveAllowedAddresses('[::1]', { resolve: never })).toMatchObject({
      ok: false,
      class: 'loopback',
    });
    expect(await resolveAllowedAddresses('8.8.8.8', { resolve: never })).toEqual({
      ok: true,
      addresses: [{ address: '8.8.8.8', family: 4 }],
    });
  });

  it('reports a name that does not resolve, or resolves to nothing, as dns_error', async () => {
    expect(await resolveAllowedAddresses('nowhere.example.com', { resolve })).toEqual({
      ok: false,
      reason: 'dns_error',
    });
    expect(await resolveAllowedAddresses('empty.example.com', { resolve })).toEqual({
      ok: false,
      reason: 'dns_error',
    });
  });
});

describe('pinnedLookup', () => {
  const addresses: ResolvedAddress[] = [
    { address: '93.184.215.14', family: 4 },
    { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
  ];
  const call = (options: object) =>
    new Promise<unknown[]>((resolve) =>
      pinnedLookup(addresses)('ignored.example', options, (...args) => resolve(args)),
    );

  it('answers with the checked addresses whatever name it is asked for', async () => {
    expect(await call({ all: true })).toEqual([null, addresses]);
    expect(await call({})).toEqual([null, '93.184.215.14', 4]);
    expect(await call({ family: 6 })).toEqual([null, '2606:2800:21f:cb07:6820:80da:af6b:8b2c', 6]);
  });

  it('fails rather than resolve when no checked address has the requested family', async () => {
    const [err] = await new Promise<unknown[]>((resolve) =>
      pinnedLookup([addresses[0]!])('x', { family: 6 }, (...args) => resolve(args)),
    );
    expect(err).toMatchObject({ code: 'ENOTFOUND' });
  });
});
