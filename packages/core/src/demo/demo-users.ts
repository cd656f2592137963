import type { NewUserWithPassword } from '../session/memory-user-directory.js';

/** The demo directory seeded by the reference servers (DESIGN §2). Not for production. */
export const demoUsers: readonly NewUserWithPassword[] = [
  {
    id: 'usr_alice',
    email: 'alice@example.com',
    name: 'Alice Martin',
    password: 'alice-demo-password',
    memberships: [
      { projectKey: 'acme-b2c', clientId: 'acme', role: 'admin' },
      { projectKey: 'acme-b2b', clientId: 'acme', role: 'agent' },
    ],
  },
  {
    id: 'usr_bob',
    email: 'bob@example.com',
    name: 'Bob Keller',
    password: 'bob-demo-password',
    memberships: [{ projectKey: 'globex-b2c', clientId: 'globex', role: 'viewer' }],
  },
];
