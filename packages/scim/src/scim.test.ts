import { createMemoryAuditStore } from '@deskpilot/core/session';
import { testUsers } from '@deskpilot/core/testing';
import { describe, expect, it } from 'vitest';
import { createScimModule } from './create-scim-module.js';
import { untouchedPrototypes } from './scim-patching.js';
import { createMemoryScimStore } from './scim-store.js';
import { dana, json, scimSetup } from './scim.test-support.js';

const patchOp = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const userSchema = 'urn:ietf:params:scim:schemas:core:2.0:User';
const scimError = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** Dana, pushed by acme's directory and put in its Agents group: an agent in both of acme's projects. */
async function danaInAgents() {
  const setup = await scimSetup();
  const { scimCall } = setup;
  const user = await json(
    await scimCall('POST', '/Users', { schemas: [userSchema], userName: dana.email, externalId: 'okta-dana' }),
  );
  const group = await json(await scimCall('POST', '/Groups', { displayName: 'Agents', members: [{ value: user.id }] }));
  return { ...setup, user, group };
}

describe('deprovisioning', () => {
  it('deactivation ends every session in the organisation’s projects at once and removes those memberships, nothing else', async () => {
    const { scimCall, call, signIn, membershipsOf, user, audit } = await danaInAgents();
    expect(await membershipsOf(dana.email)).toEqual([
      { projectKey: 'globex-b2c', clientId: 'globex', role: 'agent' },
      { projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' },
      { projectKey: 'acme-b2b', clientId: 'acme', role: 'agent' },
    ]);
    const inAcme = (await signIn(dana, 'acme-b2c'))!;
    const inGlobex = (await signIn(dana, 'globex-b2c'))!;
    expect((await call('GET', '/sessions/current', undefined, inAcme)).status).toBe(200);

    const deactivated = await scimCall('PATCH', `/Users/${user.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
    });
    expect(deactivated.status).toBe(200);
    expect((await call('GET', '/sessions/current', undefined, inAcme)).status).toBe(401);
    expect((await call('GET', '/sessions/current', undefined, inGlobex)).status).toBe(200);
    expect(await membershipsOf(dana.email)).toEqual([{ projectKey: 'globex-b2c', clientId: 'globex', role: 'agent' }]);
    // Her password still opens globex, never acme.
    expect(await signIn(dana, 'acme-b2c')).toBeNull();
    const trail = await audit.list({ projectKey: 'acme-b2c' });
    expect(trail.map((record) => record.type)).toEqual(
      expect.arrayContaining(['scim-role-set', 'scim-membership-removed', 'scim-user-deactivated']),
    );
    expect(trail.find((record) => record.type === 'scim-user-deactivated')).toMatchObject({
      actor: null,
      data: { organization: 'acme', scimUser: user.id, sessionsEnded: 1 },
    });
    expect(await audit.list({ projectKey: 'globex-b2c' })).not.toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'scim-user-deactivated' })]),
    );
  });

  it('re-activation restores what the groups say, nothing more; deletion deprovisions and keeps the account', async () => {
    const { scimCall, membershipsOf, user, directory, call, signIn } = await danaInAgents();
    await scimCall('PATCH', `/Users/${user.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    expect(await membershipsOf(dana.email)).toHaveLength(1);
    await scimCall('PATCH', `/Users/${user.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'replace', value: { active: true } }],
    });
    expect(await membershipsOf(dana.email)).toHaveLength(3);
    const session = (await signIn(dana, 'acme-b2b'))!;
    expect((await scimCall('DELETE', `/Users/${user.id}`)).status).toBe(204);
    expect((await call('GET', '/sessions/current', undefined, session)).status).toBe(401);
    expect(await membershipsOf(dana.email)).toEqual([{ projectKey: 'globex-b2c', clientId: 'globex', role: 'agent' }]);
    expect(await directory.findUserByEmail(dana.email)).not.toBeNull();
    // Created again later: bound to the same account, holding nothing until a group gives it.
    const again = await json(await scimCall('POST', '/Users', { schemas: [userSchema], userName: dana.email }));
    expect(again.id).not.toBe(user.id);
    expect(await membershipsOf(dana.email)).toHaveLength(1);
  });

  it('a user created inactive holds nothing in the organisation', async () => {
    const { scimCall, membershipsOf } = await scimSetup();
    const user = await json(
      await scimCall('POST', '/Users', { schemas: [userSchema], userName: dana.email, active: false }),
    );
    expect(user.active).toBe(false);
    await scimCall('POST', '/Groups', { displayName: 'Agents', members: [{ value: user.id }] });
    expect(await membershipsOf(dana.email)).toEqual([{ projectKey: 'globex-b2c', clientId: 'globex', role: 'agent' }]);
  });
});

describe('deprovisioning holds', () => {
  it('a deactivated admin of the organisation is one no longer: no token from another tenant’s session', async () => {
    const { scimCall, call, signIn, organizations, directory, user, audit } = await danaInAgents();
    const danaId = (await directory.findUserByEmail(dana.email))!.id;
    await organizations.setAdmin('acme', danaId, true);
    const inGlobex = (await signIn(dana, 'globex-b2c'))!;
    await scimCall('PATCH', `/Users/${user.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    expect(await organizations.admins('acme')).not.toContain(danaId);
    const minted = await call(
      'POST',
      '/sessions/organizations/scim/tokens',
      { organization: 'acme', name: 'x' },
      inGlobex,
    );
    expect(minted.status).toBe(404);
    expect((await audit.list({ projectKey: 'acme-b2b' })).map((record) => record.type)).toContain(
      'organization-admin-revoked',
    );
  });

  it('revokes the pending invitations of a deprovisioned address to the organisation’s projects', async () => {
    const { scimCall, call, aliceCookie, signIn, membershipsOf } = await scimSetup();
    const user = await json(await scimCall('POST', '/Users', { schemas: [userSchema], userName: dana.email }));
    const invited = await call(
      'POST',
      '/sessions/team/invitations',
      { projectKey: 'acme-b2b', email: dana.email, role: 'admin', clientId: 'acme' },
      aliceCookie,
    );
    expect(invited.status).toBe(201);
    const { token } = (await invited.json()) as { token: string };
    await scimCall('PATCH', `/Users/${user.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    const inGlobex = (await signIn(dana, 'globex-b2c'))!;
    const accepted = await call('POST', '/sessions/invitations/accept', { token }, inGlobex);
    expect(accepted.status).toBeGreaterThanOrEqual(400);
    expect((await membershipsOf(dana.email)).filter((membership) => membership.clientId === 'acme')).toEqual([]);
  });

  it('a deprovisioning that fails part way is finished by the directory’s retry', async () => {
    const audit = createMemoryAuditStore();
    const append = audit.append.bind(audit);
    let failures = 1;
    audit.append = async (event) => {
      if (event.type === 'scim-membership-removed' && failures-- > 0) throw new Error('the trail is down');
      return append(event);
    };
    const setup = await scimSetup({ audit });
    const { scimCall, call, signIn, membershipsOf } = setup;
    const user = await json(await scimCall('POST', '/Users', { schemas: [userSchema], userName: dana.email }));
    await scimCall('POST', '/Groups', { displayName: 'Agents', members: [{ value: user.id }] });
    const session = (await signIn(dana, 'acme-b2c'))!;
    const failed = await scimCall('DELETE', `/Users/${user.id}`);
    expect(failed.status).toBe(500);
    expect(await json(failed)).toMatchObject({ schemas: [scimError], status: '500' });
    // Still there, inactive: the retry finds it and finishes.
    expect((await json(await scimCall('GET', `/Users/${user.id}`))).active).toBe(false);
    expect((await scimCall('DELETE', `/Users/${user.id}`)).status).toBe(204);
    expect((await call('GET', '/sessions/current', undefined, session)).status).toBe(401);
    expect((await membershipsOf(dana.email)).filter((membership) => membership.clientId === 'acme')).toEqual([]);
    expect((await scimCall('GET', `/Users/${user.id}`)).status).toBe(404);
  });

  it('a deactivation racing a group change leaves no role behind', async () => {
    const { scimCall, membershipsOf } = await scimSetup();
    for (let round = 0; round < 10; round += 1) {
      const user = await json(
        await scimCall('POST', '/Users', { schemas: [userSchema], userName: `racer${round}@acme.com` }),
      );
      const group = await json(await scimCall('POST', '/Groups', { displayName: 'Support Leads' }));
      await Promise.all([
        scimCall('PATCH', `/Groups/${group.id}`, {
          schemas: [patchOp],
          Operations: [{ op: 'add', path: 'members', value: [{ value: user.id }] }],
        }),
        scimCall('PATCH', `/Users/${user.id}`, {
          schemas: [patchOp],
          Operations: [{ op: 'replace', value: { active: false } }],
        }),
      ]);
      expect(await membershipsOf(`racer${round}@acme.com`)).toEqual([]);
    }
  });

  it('bounds a PATCH of members, and syncs only those whose membership changed', async () => {
    const { scimCall } = await danaInAgents();
    const group = await json(await scimCall('POST', '/Groups', { displayName: 'Big' }));
    const many = Array.from({ length: 1001 }, (_, index) => ({ value: `made-up-${index}` }));
    const refused = await scimCall('PATCH', `/Groups/${group.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'remove', path: 'members', value: many }],
    });
    expect(refused.status).toBe(400);
    const ignored = await scimCall('PATCH', `/Groups/${group.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'remove', path: 'members', value: many.slice(0, 1000) }],
    });
    expect(ignored.status).toBe(204);
  });

  it('needs the team module with organisations, given before it', async () => {
    const { createTestSessionService } = await import('@deskpilot/core/testing');
    await expect(
      createTestSessionService({
        modules: [createScimModule({ store: createMemoryScimStore(), directory: {} as never, domains: () => [] })],
      }),
    ).rejects.toThrow(/team module with organisations/);
  });
});

describe('groups keep roles in step', () => {
  it('the first rule whose group a user is in gives the role; leaving a group takes it away; deleting a group too', async () => {
    const { scimCall, membershipsOf, user, group } = await danaInAgents();
    const leads = await json(
      await scimCall('POST', '/Groups', { displayName: 'Support Leads', members: [{ value: user.id }] }),
    );
    const acme = async () => (await membershipsOf(dana.email)).filter((membership) => membership.clientId === 'acme');
    expect(await acme()).toEqual([
      { projectKey: 'acme-b2c', clientId: 'acme', role: 'admin' },
      { projectKey: 'acme-b2b', clientId: 'acme', role: 'agent' },
    ]);
    await scimCall('PATCH', `/Groups/${leads.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'remove', path: 'members' }],
    });
    expect(await acme()).toEqual([
      { projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' },
      { projectKey: 'acme-b2b', clientId: 'acme', role: 'agent' },
    ]);
    expect((await scimCall('DELETE', `/Groups/${group.id}`)).status).toBe(204);
    expect(await acme()).toEqual([]);
    // PUT: exactly the members given.
    const put = await scimCall('PUT', `/Groups/${leads.id}`, {
      displayName: 'Support Leads',
      members: [{ value: user.id }],
    });
    expect((await json(put)).members.map((member: { value: string }) => member.value)).toEqual([user.id]);
    expect(await acme()).toEqual([{ projectKey: 'acme-b2c', clientId: 'acme', role: 'admin' }]);
  });
});

describe('tokens', () => {
  it('are shown once, kept as digests, at most two, for the organisation’s admins only; a revoked one is refused', async () => {
    const { call, scimCall, aliceCookie, signIn, token, store, newToken, audit } = await scimSetup();
    const directory = await json(
      await call('GET', '/sessions/organizations/scim?organization=acme', undefined, aliceCookie),
    );
    expect(directory).toMatchObject({ organization: 'acme', users: 0, groups: 0, lastSync: null });
    expect(JSON.stringify(directory)).not.toContain(token);
    expect(JSON.stringify(await store.listTokens('acme'))).not.toContain(token);
    await scimCall('GET', '/Users');
    const used = await json(
      await call('GET', '/sessions/organizations/scim?organization=acme', undefined, aliceCookie),
    );
    expect(used.lastSync).not.toBeNull();
    const second = await newToken('Rotation');
    expect(second).toMatch(/^scim_/);
    const third = await call(
      'POST',
      '/sessions/organizations/scim/tokens',
      { organization: 'acme', name: 'x' },
      aliceCookie,
    );
    expect(third.status).toBe(409);
    const bob = (await signIn(testUsers.bob))!;
    for (const [method, path, body] of [
      ['GET', '/sessions/organizations/scim?organization=acme', undefined],
      ['POST', '/sessions/organizations/scim/tokens', { organization: 'acme', name: 'x' }],
      ['POST', '/sessions/organizations/scim/tokens/revoke', { organization: 'acme', id: directory.tokens[0].id }],
    ] as const)
      expect((await call(method, path, body, bob)).status).toBe(404);
    expect((await call('GET', '/sessions/organizations/scim?organization=acme')).status).toBe(401);

    const revoked = await call(
      'POST',
      '/sessions/organizations/scim/tokens/revoke',
      { organization: 'acme', id: directory.tokens[0].id },
      aliceCookie,
    );
    expect(revoked.status).toBe(204);
    const refused = await scimCall('GET', '/Users');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="scim"');
    expect(await json(refused)).toEqual({
      schemas: [scimError],
      status: '401',
      detail: 'A valid bearer token is required.',
    });
    expect((await scimCall('GET', '/Users', undefined, second)).status).toBe(200);
    const types = (await audit.list({ projectKey: 'acme-b2b' })).map((record) => record.type);
    expect(types).toEqual(expect.arrayContaining(['scim-token-created', 'scim-token-revoked']));
  });

  it('lists the users the directory pushed to the organisation’s admins, a page at a time', async () => {
    const { call, scimCall, aliceCookie, signIn } = await scimSetup();
    for (const userName of ['one@acme.com', 'two@acme.com', 'three@acme.com'])
      expect(
        (await scimCall('POST', '/Users', { schemas: [userSchema], userName, active: userName !== 'two@acme.com' }))
          .status,
      ).toBe(201);
    const page = (query: string, cookie: string | undefined = aliceCookie) =>
      call('GET', `/sessions/organizations/scim/users?organization=acme${query}`, undefined, cookie);
    const first = await json(await page('&count=2'));
    expect(first).toMatchObject({ organization: 'acme', total: 3, startIndex: 1 });
    expect(first.users.map((user: { userName: string; active: boolean }) => [user.userName, user.active])).toEqual([
      ['one@acme.com', true],
      ['two@acme.com', false],
    ]);
    const next = await json(await page('&startIndex=3&count=2'));
    expect(next.users.map((user: { userName: string }) => user.userName)).toEqual(['three@acme.com']);
    for (const bad of ['&count=0', '&count=101', '&startIndex=-1', '&count=x'])
      expect((await page(bad)).status).toBe(400);
    expect((await page('', (await signIn(testUsers.bob))!)).status).toBe(404);
    expect((await call('GET', '/sessions/organizations/scim/users?organization=acme')).status).toBe(401);
  });

  it('a token of one organisation sees and changes nothing of another', async () => {
    const { scimCall, call, signIn, store } = await scimSetup();
    const bob = (await signIn(testUsers.bob))!;
    const globex = await json(
      await call('POST', '/sessions/organizations/scim/tokens', { organization: 'globex', name: 'g' }, bob),
    );
    const acmeUser = await json(await scimCall('POST', '/Users', { schemas: [userSchema], userName: dana.email }));
    expect((await scimCall('GET', `/Users/${acmeUser.id}`, undefined, globex.secret)).status).toBe(404);
    expect((await scimCall('DELETE', `/Users/${acmeUser.id}`, undefined, globex.secret)).status).toBe(404);
    expect((await json(await scimCall('GET', '/Users', undefined, globex.secret))).totalResults).toBe(0);
    // Nor may it bind an address of acme's domain (the operator lists globex.com only).
    const bind = await scimCall(
      'POST',
      '/Users',
      { schemas: [userSchema], userName: 'x', emails: [{ value: 'eve@acme.com' }] },
      globex.secret,
    );
    expect(bind.status).toBe(400);
    expect(await json(bind)).toMatchObject({ scimType: 'invalidValue' });
    expect(await store.counts('globex')).toEqual({ users: 0, groups: 0 });
  });
});

describe('refusals, in SCIM’s error schema', () => {
  it('answers bad input with 4xx and a scimType, never a 500, and stores nothing', async () => {
    const { scimCall, store } = await scimSetup();
    const created = await json(await scimCall('POST', '/Users', { schemas: [userSchema], userName: dana.email }));
    const cases: Array<[string, string, unknown, number, string | undefined]> = [
      ['GET', '/Users?filter=userName%20co%20%22a%22', undefined, 400, 'invalidFilter'],
      ['GET', '/Users?filter=%22%22%22', undefined, 400, 'invalidFilter'],
      ['GET', '/Users?count=abc', undefined, 400, 'invalidValue'],
      ['POST', '/Users', '{"userName": ', 400, 'invalidSyntax'],
      ['POST', '/Users', { schemas: [userSchema], userName: 'DANA@acme.com' }, 409, 'uniqueness'],
      ['POST', '/Users', { schemas: [userSchema], userName: 'eve@elsewhere.com' }, 400, 'invalidValue'],
      ['POST', '/Users', { schemas: [userSchema] }, 400, 'invalidValue'],
      ['POST', '/Users', { schemas: [userSchema], userName: 'nul\u0000@acme.com' }, 400, 'invalidValue'],
      ['POST', '/Users', { schemas: [userSchema], userName: 'x@acme.com', name: 'not an object' }, 400, 'invalidValue'],
      [
        'PATCH',
        `/Users/${created.id}`,
        { Operations: [{ op: 'replace', path: 'active', value: false }] },
        400,
        'invalidSyntax',
      ],
      [
        'PATCH',
        `/Users/${created.id}`,
        { schemas: [patchOp], Operations: [{ op: 'move', path: 'x' }] },
        400,
        'invalidSyntax',
      ],
      ['PATCH', `/Users/${created.id}`, { schemas: [patchOp], Operations: [{ op: 'remove' }] }, 400, 'noTarget'],
      [
        'PATCH',
        `/Users/${created.id}`,
        { schemas: [patchOp], Operations: [{ op: 'replace', path: 'active', value: 'maybe' }] },
        400,
        'invalidValue',
      ],
      [
        'PATCH',
        `/Users/${created.id}`,
        { schemas: [patchOp], Operations: [{ op: 'replace', path: 'userName', value: '' }] },
        400,
        'invalidValue',
      ],
      [
        'PATCH',
        '/Users/nobody',
        { schemas: [patchOp], Operations: [{ op: 'replace', path: 'active', value: false }] },
        404,
        undefined,
      ],
      ['POST', '/Groups', { displayName: 'G', members: [{ value: 'nobody' }] }, 400, 'invalidValue'],
      ['GET', '/Users/%E0%A4%A', undefined, 404, undefined],
      ['GET', '/Elsewhere', undefined, 404, undefined],
      ['DELETE', '/Users', undefined, 405, undefined],
    ];
    for (const [method, path, body, status, scimType] of cases) {
      const response = await scimCall(method, path, body);
      const answer = await json(response);
      expect({ path, body, status: response.status }).toEqual({ path, body, status });
      expect(answer).toMatchObject({ schemas: [scimError], status: String(status) });
      expect(answer.scimType).toBe(scimType);
    }
    const wrongType = await scimCall('POST', '/Users', undefined);
    expect(wrongType.status).toBe(415);
    expect(await store.counts('acme')).toEqual({ users: 1, groups: 0 });
    expect((await json(await scimCall('GET', `/Users/${created.id}`))).meta.version).toBe('W/"1"');
  });

  it('refuses a PATCH path or value that reaches Object.prototype, and pollutes nothing', async () => {
    const { scimCall } = await scimSetup();
    const user = await json(await scimCall('POST', '/Users', { schemas: [userSchema], userName: dana.email }));
    const group = await json(await scimCall('POST', '/Groups', { displayName: 'G' }));
    for (const operation of [
      { op: 'add', path: '__proto__.polluted', value: 'yes' },
      { op: 'add', path: 'constructor.prototype.polluted', value: 'yes' },
      { op: 'add', path: 'name.__proto__.polluted', value: 'yes' },
      { op: 'add', path: 'hasOwnProperty.call', value: 'yes' },
      { op: 'add', path: 'emails[__proto__ eq "x"].value', value: 'yes' },
      { op: 'add', value: { constructor: { prototype: { polluted: 'yes' } } } },
      { op: 'add', value: { '__proto__.polluted': true } },
      { op: 'add', path: 'name', value: { '__proto__:polluted': 'yes' } },
      {
        op: 'add',
        path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:__proto__',
        value: { polluted: 1 },
      },
      { op: 'add', path: 'emails[value eq "[value eq true].x]"].value', value: true },
      { op: 'add', path: 'emails[value eq "[value eq true].__proto__.polluted[value eq true].z]"].value', value: true },
      { op: 'replace', path: 'emails[value eq "x.__proto__.polluted"].value', value: 'yes' },
    ]) {
      const response = await scimCall('PATCH', `/Users/${user.id}`, { schemas: [patchOp], Operations: [operation] });
      expect(response.status, JSON.stringify(operation)).toBe(400);
    }
    for (const operation of [
      { op: 'replace', value: { 'constructor.prototype.polluted': 'yes' } },
      { op: 'replace', path: 'toString', value: 'yes' },
    ]) {
      const response = await scimCall('PATCH', `/Groups/${group.id}`, { schemas: [patchOp], Operations: [operation] });
      expect(response.status, JSON.stringify(operation)).toBe(400);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call).toBe(Function.prototype.call);
    // Nor is a name Object.prototype holds an attribute to filter on.
    expect((await scimCall('GET', '/Users?filter=constructor%20eq%20%22x%22')).status).toBe(400);
  });

  it('puts back whatever reaches Object.prototype or Array.prototype, and refuses the patch', () => {
    const toString = Object.prototype.toString;
    expect(() =>
      untouchedPrototypes(() => {
        (Object.prototype as Record<string, unknown>).polluted = 'yes';
        (Array.prototype as unknown as Record<string, unknown>).polluted = 'yes';
        Object.prototype.toString = () => 'replaced';
      }),
    ).toThrow(/inherits/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.toString).toBe(toString);
    expect(() =>
      untouchedPrototypes(() => {
        (Object.prototype as Record<string, unknown>).polluted = 'yes';
        throw new Error('half way');
      }),
    ).toThrow(/inherits/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('limits requests per token: 429 with Retry-After', async () => {
    const { scimCall } = await scimSetup({ rateLimit: { limit: 3, windowMs: 60_000 } });
    const statuses = [];
    for (let index = 0; index < 4; index += 1) statuses.push((await scimCall('GET', '/Users')).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await scimCall('GET', '/Users');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await json(limited)).toMatchObject({ schemas: [scimError], status: '429' });
  });

  it('a store that fails is 503 in SCIM’s schema, never a 500', async () => {
    const store = createMemoryScimStore();
    const { scimCall } = await scimSetup({ store });
    store.listUsers = async () => {
      const { DeskpilotError } = await import('@deskpilot/core/session');
      throw new DeskpilotError('store_unavailable', { detail: 'down' });
    };
    const response = await scimCall('GET', '/Users');
    expect(response.status).toBe(503);
    expect(await json(response)).toMatchObject({ schemas: [scimError], status: '503' });
  });
});

describe('lists and discovery', () => {
  it('pages users in the order they came, as SCIM counts', async () => {
    const { scimCall } = await scimSetup();
    for (const name of ['a', 'b', 'c', 'd', 'e'])
      await scimCall('POST', '/Users', { schemas: [userSchema], userName: `${name}@acme.com` });
    const page = await json(await scimCall('GET', '/Users?startIndex=3&count=2'));
    expect(page).toMatchObject({ totalResults: 5, startIndex: 3, itemsPerPage: 2 });
    expect(page.Resources.map((user: { userName: string }) => user.userName)).toEqual(['c@acme.com', 'd@acme.com']);
    expect((await json(await scimCall('GET', '/Users?count=0'))).Resources).toEqual([]);
    expect((await json(await scimCall('GET', '/Users?startIndex=0&count=1'))).startIndex).toBe(1);
  });

  it('describes itself: ServiceProviderConfig, ResourceTypes, Schemas', async () => {
    const { scimCall } = await scimSetup();
    const config = await json(await scimCall('GET', '/ServiceProviderConfig'));
    expect(config).toMatchObject({
      patch: { supported: true },
      bulk: { supported: false },
      filter: { supported: true, maxResults: 100 },
    });
    const types = await json(await scimCall('GET', '/ResourceTypes'));
    expect(types.Resources.map((type: { id: string }) => type.id)).toEqual(['User', 'Group']);
    expect((await json(await scimCall('GET', '/ResourceTypes/Group'))).endpoint).toBe('/Groups');
    const all = await json(await scimCall('GET', '/Schemas'));
    expect(all.totalResults).toBe(3);
    const user = await json(await scimCall('GET', `/Schemas/${userSchema}`));
    expect(user.attributes.find((attribute: { name: string }) => attribute.name === 'userName')).toMatchObject({
      required: true,
      uniqueness: 'server',
    });
  });
});
