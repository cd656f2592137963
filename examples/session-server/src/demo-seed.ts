import { demoUsers } from '@deskpilot/core/demo';
import type { NewUserWithHash } from '@deskpilot/core/session';

// The demo users' password hashes, computed once with `hashPassword`'s defaults (scrypt N=2^17): the
// first start seeds the demo directory without running scrypt, which takes 128 MiB and a third of a
// second per user. A sign-in checks them like any other hash. The passwords are the published demo ones.
const demoPasswordHashes: Readonly<Record<string, string>> = {
  'alice@example.com': '$scrypt$ln=17,r=8,p=1$7b/Llmo29wGr6S2hjDtmlA$syhUzyuSEt+coU3cwGnXnYBRRWlewX8AhXP7C5wRFFQ',
  'bob@example.com': '$scrypt$ln=17,r=8,p=1$KnDvf47JDRvmoPdqzTaPLg$KrtYYAZYmA1o/IMHIB9/Yh6mYR3854iFD8gjIufxyf4',
};

/** The demo users (`@deskpilot/core/demo`) with their passwords already hashed. */
export const seededDemoUsers: readonly NewUserWithHash[] = demoUsers.map(({ password: _password, ...user }) => ({
  ...user,
  passwordHash: demoPasswordHashes[user.email]!,
}));
