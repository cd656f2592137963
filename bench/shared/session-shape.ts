// Shared by the servers of the session benchmarks: the body every anchor answers.

/** A session shaped and sized like the JSON Deskpilot answers (≈ 420 bytes). */
export function sessionShapedObject(id: string) {
  const createdAt = Date.now();
  return {
    id,
    user: { id: 'usr_alice', email: 'alice@example.com', name: 'Alice Martin' },
    projectKey: 'acme-b2c',
    clientId: 'acme',
    role: 'admin',
    memberships: [
      { projectKey: 'acme-b2c', clientId: 'acme', role: 'admin' },
      { projectKey: 'acme-b2b', clientId: 'acme', role: 'agent' },
    ],
    createdAt: new Date(createdAt).toISOString(),
    expiresAt: new Date(createdAt + 12 * 3_600_000).toISOString(),
    idleExpiresAt: new Date(createdAt + 2 * 3_600_000).toISOString(),
  };
}
