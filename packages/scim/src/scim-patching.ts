import * as z from 'zod/mini';
import { parse as parseFilter, type Filter } from 'scim2-parse-filter';
import { scimPatch, type ScimPatchOperation } from 'scim-patch';
import { ScimProblem, schemaUrns } from './scim-resources.js';

// PATCH (RFC 7644 §3.5.2) as Okta and Entra ID send it, applied with scim-patch.

const operation = z.object({
  op: z.string().check(z.regex(/^(add|remove|replace)$/i, 'Must be add, remove or replace')),
  path: z.optional(z.string().check(z.maxLength(500))),
  value: z.optional(z.unknown()),
});

/** A PatchOp message: `Operations` as RFC 7644 spells it (Entra ID and Okta alike), 1 to 100 of them. */
const patchMessage = z.object({
  schemas: z
    .array(z.string())
    .check(z.refine((list) => list.includes(schemaUrns.patch), `Must name ${schemaUrns.patch}`)),
  Operations: z.array(operation).check(z.minLength(1), z.maxLength(100)),
});

export type PatchOperation = { op: 'add' | 'remove' | 'replace'; path?: string | undefined; value?: unknown };

/** Names no path may reach: scim-patch would follow them into `Object.prototype`. */
const forbidden = /(^|[.:[\]\s"])(__proto__|constructor|prototype)($|[.:[\]\s"])/i;

function hasForbiddenKey(value: unknown, depth = 0): boolean {
  if (depth > 10) return true;
  if (Array.isArray(value)) return value.some((entry) => hasForbiddenKey(entry, depth + 1));
  if (typeof value !== 'object' || value === null) return false;
  return Object.keys(value).some(
    (key) =>
      key === '__proto__' ||
      key === 'constructor' ||
      key === 'prototype' ||
      hasForbiddenKey((value as never)[key], depth + 1),
  );
}

/** The operations of a PatchOp body, `op` in lower case; 400 `invalidSyntax` or `invalidPath` otherwise. */
export function patchOperations(body: unknown): PatchOperation[] {
  const result = z.safeParse(patchMessage, body);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new ScimProblem(400, `${issue.path.map(String).join('.')}: ${issue.message}`, 'invalidSyntax');
  }
  return result.data.Operations.map(({ op, path, value }) => {
    if (path !== undefined && forbidden.test(path)) throw new ScimProblem(400, `No such path: ${path}`, 'invalidPath');
    if (hasForbiddenKey(value)) throw new ScimProblem(400, 'A value names a key no resource has.', 'invalidValue');
    return { op: op.toLowerCase() as PatchOperation['op'], path, value };
  });
}

/**
 * Applies `operations` to `resource` (a copy: `resource` is left as it was) with scim-patch; a
 * refused operation is 400 with its `scimType` (`invalidPath`, `noTarget`, `invalidValue`).
 */
export function applyPatch<T extends object>(
  resource: T,
  operations: readonly PatchOperation[],
): Record<string, unknown> {
  if (operations.length === 0) return { ...resource } as Record<string, unknown>;
  const document = {
    schemas: [schemaUrns.user],
    meta: { created: new Date(0), lastModified: new Date(0) },
    ...resource,
  };
  try {
    const patched = scimPatch(document, operations as ScimPatchOperation[], {
      mutateDocument: false,
      treatMissingAsAdd: true,
    });
    const { schemas: _schemas, meta: _meta, ...rest } = patched as Record<string, unknown>;
    return rest;
  } catch (error) {
    const scimType = (error as { scimCode?: string }).scimCode;
    const known = ['invalidPath', 'noTarget', 'invalidValue', 'mutability'] as const;
    throw new ScimProblem(
      400,
      error instanceof Error ? error.message.replace(/\s*\[object Object\]$/, '') : 'The patch cannot be applied.',
      known.find((type) => type === scimType) ?? 'invalidValue',
    );
  }
}

/** The member ids of a `members` value: `[{ value }]`. */
function memberValues(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.map((entry) => {
    const id = (entry as { value?: unknown } | null)?.value;
    if (typeof id !== 'string' || id.length === 0 || id.length > 200)
      throw new ScimProblem(400, 'A member is { "value": "<user id>" }.', 'invalidValue');
    return id;
  });
}

/** The ids a `members[value eq "…"]` path names (`or` of them too). */
function filteredMembers(path: string): string[] {
  const inner = /^members\[(.*)\]$/is.exec(path.trim())?.[1];
  let filter: Filter;
  try {
    filter = parseFilter(inner ?? '');
  } catch {
    throw new ScimProblem(400, `No such path: ${path}`, 'invalidPath');
  }
  const ids = (node: Filter): string[] => {
    if (node.op === 'or' && 'filters' in node) return node.filters.flatMap(ids);
    if (
      node.op === 'eq' &&
      'attrPath' in node &&
      node.attrPath.toLowerCase() === 'value' &&
      typeof node.compValue === 'string'
    )
      return [node.compValue];
    throw new ScimProblem(400, `Only members[value eq "…"] is supported: ${path}`, 'invalidFilter');
  };
  return ids(filter);
}

/** What a group PATCH does: its other attributes' operations, and the members added and removed in order. */
export interface GroupPatch {
  attributes: PatchOperation[];
  members: { add: Set<string>; remove: Set<string>; replace: boolean } | undefined;
}

/**
 * Splits a group's PATCH: operations on `members` — add by value, remove by value (Entra ID) or by
 * `members[value eq "…"]` (Okta), replace, remove all — become one change of members, applied in the
 * order given; the rest (`displayName`, `externalId`) are patched onto the group.
 */
export function groupPatch(operations: readonly PatchOperation[]): GroupPatch {
  const attributes: PatchOperation[] = [];
  let members: GroupPatch['members'];
  const change = () => (members ??= { add: new Set(), remove: new Set(), replace: false });
  const add = (ids: string[]) => ids.forEach((id) => (change().remove.delete(id), change().add.add(id)));
  const remove = (ids: string[]) => ids.forEach((id) => (change().add.delete(id), change().remove.add(id)));
  const replace = (ids: string[]) => {
    members = { add: new Set(ids), remove: new Set(), replace: true };
  };
  for (const operation of operations) {
    const path = operation.path?.trim();
    if (path === undefined || path === '') {
      // No path: the value's attributes, `members` among them (Okta renames a group this way).
      if (typeof operation.value !== 'object' || operation.value === null || Array.isArray(operation.value))
        throw new ScimProblem(400, 'An operation without a path takes an object.', 'invalidValue');
      const { members: given, ...rest } = operation.value as Record<string, unknown>;
      if (given !== undefined) (operation.op === 'add' ? add : replace)(memberValues(given));
      if (Object.keys(rest).length > 0) attributes.push({ ...operation, value: rest });
      continue;
    }
    if (/^members$/i.test(path)) {
      if (operation.op === 'add') add(memberValues(operation.value));
      else if (operation.op === 'replace') replace(memberValues(operation.value));
      else if (operation.value === undefined) replace([]);
      else remove(memberValues(operation.value));
    } else if (/^members\[/i.test(path)) {
      if (operation.op !== 'remove') throw new ScimProblem(400, `Only remove takes ${path}`, 'invalidPath');
      remove(filteredMembers(path));
    } else attributes.push(operation);
  }
  return { attributes, members };
}
