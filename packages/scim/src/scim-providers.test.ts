import { describe, expect, it } from 'vitest';
import { dana, json, scimSetup } from './scim.test-support.js';

// The requests below are the ones the providers' own documentation shows, values included:
// Okta — "SCIM 2.0 protocol reference" (developer.okta.com, SCIM guides); Microsoft Entra ID — "Tutorial:
// Develop and plan provisioning for a SCIM endpoint", section "User operations" / "Group operations"
// (learn.microsoft.com). Entra ID's documented "active": "False" string is the shape its older
// provisioning sends (the issue's list); the documented boolean form is tested beside it.
const patchOp = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

describe('SCIM as Okta calls it', () => {
  it('finds nobody, creates the user (never keeping the password), finds them, replaces, deactivates', async () => {
    const { scimCall, directory, membershipsOf } = await scimSetup();
    const lookup = '/Users?filter=userName%20eq%20%22test.user%40okta.local%22&startIndex=1&count=100';
    expect(await json(await scimCall('GET', lookup))).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
      totalResults: 0,
      startIndex: 1,
      itemsPerPage: 0,
      Resources: [],
    });
    const created = await scimCall('POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'test.user@okta.local',
      name: { givenName: 'Test', familyName: 'User' },
      emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
      displayName: 'Test User',
      locale: 'en-US',
      externalId: '00ujl29u0le5T6Aj10h7',
      groups: [],
      password: '1mz050nq',
      active: true,
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toBe('application/scim+json; charset=utf-8');
    const user = await json(created);
    expect(created.headers.get('location')).toBe(`https://sessions.test/scim/v2/Users/${user.id}`);
    expect(user).toMatchObject({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'test.user@okta.local',
      externalId: '00ujl29u0le5T6Aj10h7',
      active: true,
      displayName: 'Test User',
      meta: { resourceType: 'User', version: 'W/"1"' },
    });
    expect(JSON.stringify(user)).not.toContain('1mz050nq');
    // An account with that address, verified, no membership yet (groups give them), no password anyone knows.
    const account = await directory.findUserByEmail('test.user@okta.local');
    expect(account).toMatchObject({ name: 'Test User', emailVerified: true });
    expect(await membershipsOf('test.user@okta.local')).toEqual([]);
    const found = await json(await scimCall('GET', lookup));
    expect(found.totalResults).toBe(1);
    expect(found.Resources[0].id).toBe(user.id);

    const replaced = await scimCall('PUT', `/Users/${user.id}`, {
      ...user,
      name: { givenName: 'Another', familyName: 'User' },
    });
    expect(await json(replaced)).toMatchObject({ name: { givenName: 'Another' }, meta: { version: 'W/"2"' } });

    const deactivated = await scimCall('PATCH', `/Users/${user.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    expect(deactivated.status).toBe(200);
    expect((await json(deactivated)).active).toBe(false);
  });

  it('creates a group, adds and removes a member by value, renames it with the id in the value', async () => {
    const { scimCall, membershipsOf } = await scimSetup();
    const user = await json(
      await scimCall('POST', '/Users', {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName: 'test.user@okta.local',
        emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
        active: true,
      }),
    );
    const group = await json(
      await scimCall('POST', '/Groups', {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
        displayName: 'Test SCIMv2',
        members: [],
      }),
    );
    expect(group).toMatchObject({ displayName: 'Test SCIMv2', members: [] });
    const added = await scimCall('PATCH', `/Groups/${group.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'add', path: 'members', value: [{ value: user.id, display: 'test.user@okta.local' }] }],
    });
    expect(added.status).toBe(204);
    const renamed = await scimCall('PATCH', `/Groups/${group.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'replace', value: { id: group.id, displayName: 'Agents' } }],
    });
    expect(renamed.status).toBe(204);
    // Renamed into a group the mapping names: the member's roles follow the name.
    expect(await membershipsOf('test.user@okta.local')).toEqual([
      { projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' },
      { projectKey: 'acme-b2b', clientId: 'acme', role: 'agent' },
    ]);
    expect((await json(await scimCall('GET', `/Groups/${group.id}`))).members).toEqual([
      {
        value: user.id,
        display: 'test.user@okta.local',
        $ref: `https://sessions.test/scim/v2/Users/${user.id}`,
        type: 'User',
      },
    ]);
    const removed = await scimCall('PATCH', `/Groups/${group.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'remove', path: `members[value eq "${user.id}"]` }],
    });
    expect(removed.status).toBe(204);
    expect((await json(await scimCall('GET', `/Groups/${group.id}`))).members).toEqual([]);
    expect(await membershipsOf('test.user@okta.local')).toEqual([]);
  });
});

describe('SCIM as Microsoft Entra ID calls it', () => {
  const entraUser = {
    schemas: [
      'urn:ietf:params:scim:schemas:core:2.0:User',
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
    ],
    externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
    userName: 'Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1',
    active: true,
    emails: [{ primary: true, type: 'work', value: 'Test_User_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com' }],
    meta: { resourceType: 'User' },
    name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
    roles: [],
  };

  it('creates a user bound to its primary email, patches multi- and single-valued attributes, disables with "False", deletes', async () => {
    const { scimCall, directory } = await scimSetup();
    const created = await scimCall('POST', '/Users', entraUser);
    expect(created.status).toBe(201);
    const user = await json(created);
    expect(
      await directory.findUserByEmail('test_user_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com'),
    ).not.toBeNull();
    const query = await json(
      await scimCall(
        'GET',
        `/Users?filter=${encodeURIComponent('userName eq "Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1"')}`,
      ),
    );
    expect(query.Resources.map((resource: { id: string }) => resource.id)).toEqual([user.id]);
    const byExternal = await json(
      await scimCall('GET', `/Users?filter=${encodeURIComponent(`externalId eq "${entraUser.externalId}"`)}`),
    );
    expect(byExternal.totalResults).toBe(1);

    const multi = await scimCall('PATCH', `/Users/${user.id}`, {
      schemas: [patchOp],
      Operations: [
        { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@microsoft.com' },
        { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
      ],
    });
    expect(await json(multi)).toMatchObject({
      emails: [{ primary: true, type: 'work', value: 'updatedEmail@microsoft.com' }],
      name: { familyName: 'updatedFamilyName' },
    });
    const single = await scimCall('PATCH', `/Users/${user.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'Replace', path: 'userName', value: '5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com' }],
    });
    expect((await json(single)).userName).toBe('5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com');
    const enterprise = await scimCall('PATCH', `/Users/${user.id}`, {
      schemas: [patchOp],
      Operations: [
        { op: 'Add', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'Support' },
      ],
    });
    expect(await json(enterprise)).toMatchObject({
      schemas: [
        'urn:ietf:params:scim:schemas:core:2.0:User',
        'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
      ],
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Support' },
    });

    const disabled = await scimCall('PATCH', `/Users/${user.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
    });
    expect((await json(disabled)).active).toBe(false);
    const enabled = await scimCall('PATCH', `/Users/${user.id}`, {
      Operations: [{ op: 'Replace', path: 'active', value: true }],
      schemas: [patchOp],
    });
    expect((await json(enabled)).active).toBe(true);
    expect((await scimCall('DELETE', `/Users/${user.id}`)).status).toBe(204);
    expect((await scimCall('GET', `/Users/${user.id}`)).status).toBe(404);
  });

  it('creates a group, reads it without members, adds and removes members by value list, renames (204 each)', async () => {
    const { scimCall, membershipsOf } = await scimSetup();
    const user = await json(await scimCall('POST', '/Users', { ...entraUser, userName: 'dana@acme.com', emails: [] }));
    const created = await scimCall('POST', '/Groups', {
      schemas: [
        'urn:ietf:params:scim:schemas:core:2.0:Group',
        'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group',
      ],
      externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
      displayName: 'displayName',
      meta: { resourceType: 'Group' },
    });
    expect(created.status).toBe(201);
    const group = await json(created);
    const read = await json(await scimCall('GET', `/Groups/${group.id}?excludedAttributes=members`));
    expect(read).not.toHaveProperty('members');
    expect(read.externalId).toBe('8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159');
    const byName = await json(
      await scimCall(
        'GET',
        `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "displayName"')}`,
      ),
    );
    expect(byName.Resources.map((resource: { id: string }) => resource.id)).toEqual([group.id]);
    const rename = await scimCall('PATCH', `/Groups/${group.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'Replace', path: 'displayName', value: 'Support Leads' }],
    });
    expect(rename.status).toBe(204);
    const add = await scimCall('PATCH', `/Groups/${group.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: user.id }] }],
    });
    expect(add.status).toBe(204);
    // Dana keeps her own globex membership; the leads' group makes her an admin of the storefront.
    expect(await membershipsOf(dana.email)).toEqual([
      { projectKey: 'globex-b2c', clientId: 'globex', role: 'agent' },
      { projectKey: 'acme-b2c', clientId: 'acme', role: 'admin' },
    ]);
    const remove = await scimCall('PATCH', `/Groups/${group.id}`, {
      schemas: [patchOp],
      Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: user.id }] }],
    });
    expect(remove.status).toBe(204);
    expect(await membershipsOf(dana.email)).toEqual([{ projectKey: 'globex-b2c', clientId: 'globex', role: 'agent' }]);
    expect((await scimCall('DELETE', `/Groups/${group.id}`)).status).toBe(204);
  });
});
