// The platform's ports, from SESSION_PORT, CHAT_PORT, STUDIO_PORT and KNOWLEDGE_BASE_PORT or their defaults: shared by
// `npm start`'s port check and its launcher.

/** A service's port from its variable, or its default; exits with a clear line when the value is not a port. */
function portOf(variable: string, fallback: number): number {
  const value = process.env[variable];
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (Number.isInteger(port) && port >= 1 && port <= 65535) return port;
  console.error(`${variable}: not a port (1-65535)`);
  process.exit(2);
}

/** Each service's port, and the variable that sets it. */
export function platformPorts() {
  return {
    session: { port: portOf('SESSION_PORT', 4360), variable: 'SESSION_PORT' },
    chat: { port: portOf('CHAT_PORT', 8080), variable: 'CHAT_PORT' },
    studio: { port: portOf('STUDIO_PORT', 3000), variable: 'STUDIO_PORT' },
    knowledgeBase: { port: portOf('KNOWLEDGE_BASE_PORT', 4370), variable: 'KNOWLEDGE_BASE_PORT' },
  } as const;
}
