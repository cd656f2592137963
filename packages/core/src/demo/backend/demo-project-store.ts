/** Per-project state of a demo backend, seeded on first use. */
export interface DemoProjectStore<State> {
  /** The project's state, seeded when it is not held. */
  get(projectKey: string): State;
}

/**
 * Creates a store of per-project demo state. Any project key gets data, so the number of projects held
 * is bounded: past `maxProjects`, the least recently used project is dropped and comes back freshly
 * seeded (its demo writes are forgotten), which keeps memory flat when clients spray project keys.
 *
 * @example
 * const projects = createDemoProjectStore((projectKey) => seedDemoCommerce(projectKey), 1000);
 */
export function createDemoProjectStore<State>(
  seed: (projectKey: string) => State,
  maxProjects: number,
): DemoProjectStore<State> {
  if (!Number.isInteger(maxProjects) || maxProjects < 1) throw new TypeError('maxProjects must be a positive integer');
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const projects = new Map<string, State>();
  return {
    get(projectKey) {
      if (typeof projectKey !== 'string' || projectKey.length === 0)
        throw new TypeError('projectKey must be a non-empty string');
      let state = projects.get(projectKey);
      if (state === undefined) {
        state = seed(projectKey);
        if (projects.size >= maxProjects) projects.delete(projects.keys().next().value!);
      } else {
        projects.delete(projectKey);
      }
      projects.set(projectKey, state);
      return state;
    },
  };
}
