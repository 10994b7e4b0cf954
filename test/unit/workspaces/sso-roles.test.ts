import { describe, expect, it } from 'vitest';
import { emailDomain, roleFromGroups } from '../../../src/domain/workspaces/sso/sso-roles.js';

/** The groups claim to a role (docs/console.md#single-sign-on): the highest mapped role wins, never owner. */
describe('roleFromGroups', () => {
  const map = { 'sec-admins': 'admin', devs: 'member', auditors: 'viewer', bosses: 'owner' };
  it.each([
    [{ groups: ['devs', 'auditors'] }, 'member'],
    [{ groups: ['auditors', 'sec-admins', 'devs'] }, 'admin'],
    [{ groups: 'auditors' }, 'viewer'],
    [{ groups: ['unknown'] }, null],
    [{ groups: [] }, null],
    [{}, null],
    [{ groups: [42, null, { x: 1 }, 'devs'] }, 'member'],
    [{ groups: ['bosses'] }, null],
    [{ groups: ['toString', '__proto__', 'constructor'] }, null],
    [{ roles: ['sec-admins'] }, null],
  ] as const)('%j → %s', (claims, role) => {
    expect(roleFromGroups(claims as Record<string, unknown>, 'groups', map)).toBe(role);
  });

  it('reads the claim the settings name', () => {
    expect(roleFromGroups({ roles: ['sec-admins'] }, 'roles', map)).toBe('admin');
  });
});

describe('emailDomain', () => {
  it.each([
    ['a@Example.COM', 'example.com'],
    ['"odd@name"@corp.test', 'corp.test'],
    ['nobody', ''],
  ])('%s → %s', (email, domain) => expect(emailDomain(email)).toBe(domain));
});
