import type { SessionRecord, SessionStore } from './session-store.js';

/** A {@link SessionStore} in process memory: for tests, demos and single-process servers. */
export interface MemorySessionStore extends SessionStore {
  /** Every stored record (copies), for inspection in tests. */
  dump(): SessionRecord[];
}

/**
 * Creates an in-memory {@link SessionStore}. Stored records are frozen copies, handed out as they are:
 * callers can never mutate stored state, and a read costs no copy.
 *
 * @example
 * const store = createMemorySessionStore();
 */
export function createMemorySessionStore(): MemorySessionStore {
  const byId = new Map<string, SessionRecord>();
  const byUser = new Map<string, Set<string>>();

  const insert = (record: SessionRecord) => {
    byId.set(record.id, Object.freeze({ ...record }));
    let ids = byUser.get(record.userId);
    if (!ids) byUser.set(record.userId, (ids = new Set()));
    ids.add(record.id);
  };
  const remove = (record: SessionRecord) => {
    byId.delete(record.id);
    const ids = byUser.get(record.userId);
    ids?.delete(record.id);
    if (ids?.size === 0) byUser.delete(record.userId);
  };

  return {
    async create(record) {
      if (byId.has(record.id)) throw new Error('Session id already exists');
      insert(record);
    },
    async get(id) {
      return byId.get(id) ?? null;
    },
    async touch(id, expectedVersion, idleExpiresAt) {
      const record = byId.get(id);
      if (!record || record.version !== expectedVersion) return false;
      byId.set(id, Object.freeze({ ...record, idleExpiresAt, version: record.version + 1 }));
      return true;
    },
    async replace(id, expectedVersion, next) {
      const record = byId.get(id);
      if (!record || record.version !== expectedVersion || byId.has(next.id)) return false;
      remove(record);
      insert(next);
      return true;
    },
    async delete(id) {
      const record = byId.get(id);
      if (!record) return false;
      remove(record);
      return true;
    },
    async deleteByUser(userId) {
      const ids = [...(byUser.get(userId) ?? [])];
      for (const id of ids) remove(byId.get(id)!);
      return ids.length;
    },
    async deleteInProjects(projectKeys, exceptUserIds) {
      const ended = [...byId.values()].filter(
        (record) => projectKeys.includes(record.projectKey) && !exceptUserIds.includes(record.userId),
      );
      for (const record of ended) remove(record);
      return ended.length;
    },
    async listByUser(userId) {
      return [...(byUser.get(userId) ?? [])]
        .map((id) => byId.get(id)!)
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },
    async deleteExpired(now) {
      let count = 0;
      for (const record of byId.values()) {
        if (record.expiresAt <= now || record.idleExpiresAt <= now) {
          remove(record);
          count++;
        }
      }
      return count;
    },
    dump() {
      return [...byId.values()].map((record) => ({ ...record }));
    },
  };
}
