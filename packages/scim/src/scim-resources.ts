import * as z from 'zod/mini';
import { parse as parseFilter, type Filter } from 'scim2-parse-filter';
import type { ScimAttributes, ScimGroupRecord, ScimListQuery, ScimMember, ScimUserRecord } from './scim-store.js';

// The resources of RFC 7643 as this service reads and writes them, and its discovery documents.

export const schemaUrns = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  enterprise: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  list: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patch: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const;

/** SCIM's `scimType` of a 400 (RFC 7644 §3.12), or none. */
export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

/** A refusal the SCIM handler answers in SCIM's error schema. */
export class ScimProblem extends Error {
  readonly status: number;
  readonly scimType: ScimType | undefined;
  readonly headers: Array<[string, string]>;
  constructor(status: number, detail: string, scimType?: ScimType, headers: Array<[string, string]> = []) {
    super(detail);
    this.status = status;
    this.scimType = scimType;
    this.headers = headers;
  }
}

// ES2024's `String.prototype.isWellFormed` (Node ≥ 20); the project's TypeScript lib is ES2023.
const wellFormed = (text: string) => (text as unknown as { isWellFormed(): boolean }).isWellFormed();
const control = /[\u0000-\u001f\u007f]/;

/** Valid text of at most `max` characters: no control character, no lone surrogate. */
const text = (max: number) =>
  z.string().check(
    z.maxLength(max),
    z.refine((value) => !control.test(value), 'Must be one line of text'),
    z.refine(wellFormed, 'Must be valid text'),
  );
const required = (max: number) => text(max).check(z.trim(), z.minLength(1));

/** A boolean, or the strings Entra ID sends for one (`"True"`, `"False"`, any case). */
export const flag = z.pipe(
  z.union([z.boolean(), z.string().check(z.regex(/^(true|false)$/i, 'Must be a boolean'))]),
  z.transform((value) => (typeof value === 'boolean' ? value : value.toLowerCase() === 'true')),
);

const multiValued = z.object({
  value: text(320),
  type: z.optional(text(50)),
  primary: z.optional(flag),
  display: z.optional(text(320)),
});

/** The attributes of a User this service keeps (anything else a directory sends — `password` included — is dropped). */
const userAttributes = {
  name: z.optional(
    z.object({
      formatted: z.optional(text(500)),
      familyName: z.optional(text(200)),
      givenName: z.optional(text(200)),
      middleName: z.optional(text(200)),
      honorificPrefix: z.optional(text(50)),
      honorificSuffix: z.optional(text(50)),
    }),
  ),
  displayName: z.optional(text(300)),
  nickName: z.optional(text(200)),
  title: z.optional(text(200)),
  userType: z.optional(text(100)),
  preferredLanguage: z.optional(text(50)),
  locale: z.optional(text(50)),
  timezone: z.optional(text(100)),
  emails: z.optional(z.array(multiValued).check(z.maxLength(10))),
  phoneNumbers: z.optional(z.array(multiValued).check(z.maxLength(10))),
  [schemaUrns.enterprise]: z.optional(
    z.object({
      employeeNumber: z.optional(text(100)),
      costCenter: z.optional(text(200)),
      organization: z.optional(text(200)),
      division: z.optional(text(200)),
      department: z.optional(text(200)),
      manager: z.optional(z.object({ value: z.optional(text(200)), displayName: z.optional(text(300)) })),
    }),
  ),
};

/** A User as a directory sends it (POST, PUT, and the result of a PATCH). */
export const userInput = z.object({
  userName: required(256),
  externalId: z.optional(z.nullable(text(256))),
  active: z.optional(flag),
  ...userAttributes,
});
export type UserInput = z.infer<typeof userInput>;

/** A Group as a directory sends it. */
export const groupInput = z.object({
  displayName: required(256),
  externalId: z.optional(z.nullable(text(256))),
  members: z.optional(z.array(z.object({ value: text(200) })).check(z.maxLength(10_000))),
});

/** The attributes a user record keeps beside its indexed keys, at most `maxBytes` of JSON. */
export function userAttributesOf(input: UserInput, maxBytes = 16 * 1024): ScimAttributes {
  const { userName: _userName, externalId: _externalId, active: _active, ...attributes } = input;
  const kept = Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== undefined));
  if (JSON.stringify(kept).length > maxBytes)
    throw new ScimProblem(400, `The user's attributes exceed ${maxBytes} bytes.`, 'invalidValue');
  return kept;
}

/** Reads a JSON body with `schema`: 400 `invalidValue` naming the first field it refuses. */
export function readResource<T>(schema: z.ZodMiniType<T>, body: unknown): T {
  const result = z.safeParse(schema, body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.map(String).join('.');
  throw new ScimProblem(400, `${path ? `${path}: ` : ''}${issue.message}`, 'invalidValue');
}

const iso = (at: number) => new Date(at).toISOString();

/** A user as SCIM answers it. */
export function userResource(user: ScimUserRecord, base: string) {
  const extension = schemaUrns.enterprise in user.attributes;
  return {
    schemas: extension ? [schemaUrns.user, schemaUrns.enterprise] : [schemaUrns.user],
    id: user.id,
    ...(user.externalId === null ? {} : { externalId: user.externalId }),
    userName: user.userName,
    active: user.active,
    ...user.attributes,
    meta: {
      resourceType: 'User',
      created: iso(user.createdAt),
      lastModified: iso(user.updatedAt),
      location: `${base}/Users/${user.id}`,
      version: `W/"${user.version}"`,
    },
  };
}

/** A group as SCIM answers it (its members unless `excludedAttributes=members`). */
export function groupResource(group: ScimGroupRecord, members: ScimMember[] | undefined, base: string) {
  return {
    schemas: [schemaUrns.group],
    id: group.id,
    ...(group.externalId === null ? {} : { externalId: group.externalId }),
    displayName: group.displayName,
    ...(members === undefined
      ? {}
      : { members: members.map((member) => ({ ...member, $ref: `${base}/Users/${member.value}`, type: 'User' })) }),
    meta: {
      resourceType: 'Group',
      created: iso(group.createdAt),
      lastModified: iso(group.updatedAt),
      location: `${base}/Groups/${group.id}`,
      version: `W/"${group.version}"`,
    },
  };
}

/** A ListResponse (RFC 7644 §3.4.2). */
export const listResponse = (total: number, startIndex: number, resources: unknown[]) => ({
  schemas: [schemaUrns.list],
  totalResults: total,
  startIndex,
  itemsPerPage: resources.length,
  Resources: resources,
});

type FilterAttribute = NonNullable<ScimListQuery['filter']>['attribute'];

/** The filters a list answers: one attribute `eq` a string (what Okta and Entra ID send to find a resource). */
const filterable: Record<'Users' | 'Groups', Record<string, FilterAttribute>> = {
  Users: { username: 'userName', externalid: 'externalId' },
  Groups: { displayname: 'displayName', externalid: 'externalId' },
};

/**
 * The query of a list: `filter` (parsed by scim2-parse-filter; `userName eq`, `externalId eq` for
 * users, `displayName eq`, `externalId eq` for groups), `startIndex` (1-based; less than 1 is 1) and
 * `count` (at most `maxCount`, the page size when absent; less than 0 is 0).
 */
export function listQuery(search: URLSearchParams, resource: keyof typeof filterable, maxCount: number): ScimListQuery {
  const integer = (name: string, fallback: number) => {
    const raw = search.get(name);
    if (raw === null || raw === '') return fallback;
    if (!/^-?\d{1,9}$/.test(raw)) throw new ScimProblem(400, `${name} must be an integer.`, 'invalidValue');
    return Number(raw);
  };
  const startIndex = Math.max(1, integer('startIndex', 1));
  const count = Math.min(maxCount, Math.max(0, integer('count', maxCount)));
  const raw = search.get('filter');
  if (raw === null || raw.trim() === '') return { startIndex, count };
  if (raw.length > 1000) throw new ScimProblem(400, 'The filter is too long.', 'invalidFilter');
  let parsed: Filter;
  try {
    parsed = parseFilter(raw);
  } catch {
    throw new ScimProblem(400, 'The filter is not a SCIM filter.', 'invalidFilter');
  }
  const names = filterable[resource];
  const name = 'attrPath' in parsed ? parsed.attrPath.toLowerCase() : '';
  // Own names only: `constructor` names no attribute, whatever Object.prototype holds.
  const attribute = parsed.op === 'eq' && Object.hasOwn(names, name) ? names[name] : undefined;
  const value = 'compValue' in parsed ? parsed.compValue : undefined;
  if (!attribute || typeof value !== 'string')
    throw new ScimProblem(
      400,
      `Only ${Object.values(filterable[resource])
        .map((name) => `${name} eq "…"`)
        .join(' and ')} filters are supported.`,
      'invalidFilter',
    );
  return { startIndex, count, filter: { attribute, value } };
}

/** The service's capabilities (RFC 7643 §5): PATCH, filters, no bulk, no sort, no ETags, no password change. */
export const serviceProviderConfig = (base: string, maxResults: number) => ({
  schemas: [schemaUrns.serviceProviderConfig],
  documentationUri: 'https://github.com/deskpilot/deskpilot/tree/main/packages/scim#readme',
  patch: { supported: true },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults },
  changePassword: { supported: false },
  sort: { supported: false },
  etag: { supported: false },
  authenticationSchemes: [
    {
      type: 'oauthbearertoken',
      name: 'Bearer token',
      description: "A token an organisation's admin creates in the studio; shown once.",
      primary: true,
    },
  ],
  meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
});

/** The two resource types (RFC 7643 §6). */
export const resourceTypes = (base: string) => [
  {
    schemas: [schemaUrns.resourceType],
    id: 'User',
    name: 'User',
    endpoint: '/Users',
    schema: schemaUrns.user,
    schemaExtensions: [{ schema: schemaUrns.enterprise, required: false }],
    meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
  },
  {
    schemas: [schemaUrns.resourceType],
    id: 'Group',
    name: 'Group',
    endpoint: '/Groups',
    schema: schemaUrns.group,
    meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` },
  },
];

type Attribute = {
  name: string;
  type: 'string' | 'boolean' | 'complex' | 'reference';
  multiValued?: boolean;
  required?: boolean;
  mutability?: 'readOnly' | 'readWrite' | 'immutable';
  uniqueness?: 'none' | 'server';
  subAttributes?: Attribute[];
};

const attribute = (name: string, type: Attribute['type'] = 'string', more: Partial<Attribute> = {}): Attribute => ({
  name,
  type,
  multiValued: false,
  required: false,
  mutability: 'readWrite',
  uniqueness: 'none',
  ...more,
});
const multi = (name: string) =>
  attribute(name, 'complex', {
    multiValued: true,
    subAttributes: [attribute('value'), attribute('type'), attribute('primary', 'boolean'), attribute('display')],
  });

/** The schemas this service keeps of (RFC 7643 §7): only the attributes it stores. */
export const schemas = (base: string) =>
  [
    {
      id: schemaUrns.user,
      name: 'User',
      attributes: [
        attribute('userName', 'string', { required: true, uniqueness: 'server' }),
        attribute('externalId'),
        attribute('active', 'boolean'),
        attribute('name', 'complex', {
          subAttributes: [
            'formatted',
            'familyName',
            'givenName',
            'middleName',
            'honorificPrefix',
            'honorificSuffix',
          ].map((name) => attribute(name)),
        }),
        ...['displayName', 'nickName', 'title', 'userType', 'preferredLanguage', 'locale', 'timezone'].map((name) =>
          attribute(name),
        ),
        multi('emails'),
        multi('phoneNumbers'),
      ],
    },
    {
      id: schemaUrns.enterprise,
      name: 'EnterpriseUser',
      attributes: [
        ...['employeeNumber', 'costCenter', 'organization', 'division', 'department'].map((name) => attribute(name)),
        attribute('manager', 'complex', { subAttributes: [attribute('value'), attribute('displayName')] }),
      ],
    },
    {
      id: schemaUrns.group,
      name: 'Group',
      attributes: [
        attribute('displayName', 'string', { required: true }),
        attribute('externalId'),
        attribute('members', 'complex', {
          multiValued: true,
          subAttributes: [attribute('value', 'string', { mutability: 'immutable' }), attribute('display')],
        }),
      ],
    },
  ].map((schema) => ({
    schemas: [schemaUrns.schema],
    ...schema,
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${schema.id}` },
  }));
