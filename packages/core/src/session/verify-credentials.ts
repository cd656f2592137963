import { hashPassword, passwordNeedsRehash, verifyPassword, type PasswordHashOptions } from './password.js';
import { normalizeEmail, type Account, type UserDirectory } from './user-directory.js';

/** Options of {@link verifyCredentials}. */
export interface VerifyCredentialsOptions {
  /**
   * scrypt parameters of a hash upgraded after a successful login and of the decoy hash checked for
   * unknown emails; give the directory the same ones for the hashes it writes.
   * @default N=2^17, r=8, p=1 (those of `hashPassword`)
   */
  passwordHash?: PasswordHashOptions;
}

// One decoy per parameter set, built on first use and kept: its password matches nothing.
const decoys = new Map<string, Promise<string>>();

function decoyHash(options: PasswordHashOptions = {}): Promise<string> {
  const key = `${options.cost}/${options.blockSize}/${options.parallelization}`;
  let decoy = decoys.get(key);
  if (!decoy) {
    decoy = hashPassword('decoy password that matches nothing', options);
    // Awaited only for an unknown email: a rejection (parameters scrypt refuses) must not go unhandled meanwhile.
    decoy.catch(() => {});
    decoys.set(key, decoy);
  }
  return decoy;
}

/**
 * The account when the email and password match; null otherwise, after the same work either way: an
 * unknown email is checked against a decoy hash at the current parameters, so it costs one scrypt
 * verification like a wrong password. A hash `passwordNeedsRehash` flags is replaced after a
 * successful login, only if the directory still holds the hash just checked.
 *
 * @example
 * const account = await verifyCredentials(directory, 'rep@example.com', 'correct horse');
 * if (!account) return { ok: false, reason: 'invalid_credentials' };
 */
export async function verifyCredentials(
  directory: UserDirectory,
  email: string,
  password: string,
  options: VerifyCredentialsOptions = {},
): Promise<Account | null> {
  return (await checkPassword(directory, email, password, options))?.account ?? null;
}

/**
 * {@link verifyCredentials}, with the hash the directory holds afterwards (the upgraded one when the
 * upgrade was written): the session service checks it is still there once the session exists, so a
 * sign-in racing a password reset never outlives it.
 */
export async function checkPassword(
  directory: UserDirectory,
  email: string,
  password: string,
  options: VerifyCredentialsOptions = {},
): Promise<{ account: Account; passwordHash: string } | null> {
  const decoy = decoyHash(options.passwordHash);
  const credentials = await directory.findCredentials(normalizeEmail(email));
  const checkedHash = credentials?.passwordHash ?? (await decoy);
  const matches = await verifyPassword(password, checkedHash);
  if (!credentials || !matches) return null;
  let passwordHash = checkedHash;
  if (passwordNeedsRehash(checkedHash, options.passwordHash)) {
    const upgraded = await hashPassword(password, options.passwordHash);
    if (await directory.updatePasswordHash(credentials.userId, checkedHash, upgraded)) passwordHash = upgraded;
  }
  const account = await directory.getAccount(credentials.userId);
  return account && { account, passwordHash };
}
