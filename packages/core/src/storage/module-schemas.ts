/** What {@link checkModuleSchemas} reads of a module's schema on any SQL store. */
export interface ModuleSchemaLike {
  module: string;
  migrations: readonly { version: number; name: string }[];
}

const moduleName = /^[a-z][a-z0-9-]{0,63}$/;

/**
 * Refuses module schemas a SQL store could not record (a programming error of the module, refused
 * before any statement runs): a name not spelled as lower-case letters, digits and dashes starting with
 * a letter (it is stored, and printed into SQL files), a name given twice, a version that is not a
 * positive integer or is given twice, a migration without a name of one line.
 */
export function checkModuleSchemas(modules: readonly ModuleSchemaLike[]): void {
  const names = new Set<string>();
  for (const schema of modules) {
    if (typeof schema.module !== 'string' || !moduleName.test(schema.module))
      throw new TypeError(
        `a module schema's name is lower-case letters, digits and dashes, starting with a letter, not ${JSON.stringify(String(schema.module).slice(0, 70))}`,
      );
    if (names.has(schema.module)) throw new TypeError(`the module schema ${schema.module} is given twice`);
    names.add(schema.module);
    const versions = new Set<number>();
    for (const { version, name } of schema.migrations) {
      if (!Number.isSafeInteger(version) || version < 1 || versions.has(version))
        throw new TypeError(
          `the module schema ${schema.module} has a migration version that is not a positive integer of its own: ${String(version)}`,
        );
      versions.add(version);
      // A name is recorded and printed into SQL files' comments: one line of text.
      if (typeof name !== 'string' || name === '' || name.length > 200 || /[\u0000-\u001f\u007f]/.test(name))
        throw new TypeError(
          `the module schema ${schema.module}'s migration ${version} needs a name of one line of text (at most 200 characters)`,
        );
    }
  }
}
