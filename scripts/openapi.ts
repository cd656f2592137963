// docs/openapi/session.json and docs/openapi/chat.json, written from the handlers' own schemas
// (`@deskpilot/core/openapi`), so the committed contract cannot drift from what the servers validate.
//   node scripts/openapi.ts           rewrites both files
//   node scripts/openapi.ts --check   exits 1 when a committed file is stale
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chatOpenApi, chatRouteDeclarations, sessionOpenApi, sessionRouteDeclarations } from '@deskpilot/core/openapi';
import { usageRoutes } from '@deskpilot/usage/routes';
import { magicLinkRoutes } from '@deskpilot/magic-link';
import { passkeyRoutes } from '@deskpilot/passkeys';
import { scimRoutes } from '@deskpilot/scim';
import { ssoConnectionRoutes, ssoRoutes } from '@deskpilot/sso';

export const openApiDirectory = fileURLToPath(new URL('../docs/openapi/', import.meta.url));

/**
 * Every route the reference session server can serve: the kernel's, core's modules', and those of
 * sign-in links, passkeys, single sign-on, organisations' own connections and SCIM directories (a server serves those of
 * the modules it is configured with).
 */
export const referenceSessionRoutes = [
  ...sessionRouteDeclarations,
  ...Object.values(magicLinkRoutes),
  ...Object.values(passkeyRoutes),
  ...Object.values(ssoRoutes),
  ...Object.values(ssoConnectionRoutes),
  ...Object.values(scimRoutes),
];

/** Every route the reference chat server serves: the chat's, and the usage module's. */
export const referenceChatRoutes = [...chatRouteDeclarations, ...Object.values(usageRoutes)];

/** The documents as committed: 2-space JSON and a final newline. */
export function openApiFiles(): Array<{ name: string; text: string }> {
  return [
    { name: 'session.json', text: `${JSON.stringify(sessionOpenApi({ routes: referenceSessionRoutes }), null, 2)}\n` },
    { name: 'chat.json', text: `${JSON.stringify(chatOpenApi({ routes: referenceChatRoutes }), null, 2)}\n` },
  ];
}

/** The committed files that differ from the generated ones (or are missing). */
export function staleOpenApiFiles(directory = openApiDirectory): string[] {
  const read = (name: string) => {
    try {
      return readFileSync(`${directory}${name}`, 'utf8');
    } catch {
      return undefined;
    }
  };
  return openApiFiles()
    .filter((file) => read(file.name) !== file.text)
    .map((file) => file.name);
}

if (import.meta.main) {
  if (process.argv.includes('--check')) {
    const stale = staleOpenApiFiles();
    if (stale.length > 0) {
      process.stderr.write(
        `docs/openapi is stale (${stale.join(', ')}): a schema changed; run \`node scripts/openapi.ts\` and commit the result.\n`,
      );
      process.exit(1);
    }
  } else {
    mkdirSync(openApiDirectory, { recursive: true });
    for (const file of openApiFiles()) writeFileSync(`${openApiDirectory}${file.name}`, file.text);
  }
}
