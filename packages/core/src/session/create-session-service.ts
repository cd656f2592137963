import { resolveSession, authenticateToken } from './resolve-session.js';
import { findMembership, toSession } from './session.js';
import type { PasswordHashOptions } from './password.js';
import type { SessionContext } from './session-context.js';
import { createSessionCookie, type SessionCookieOptions } from './session-cookie.js';
import { createSessionLookup, type SessionLookup } from './session-lookup.js';
import type { SessionRecord, SessionStore } from './session-store.js';
import { createSecretHasher, createSessionToken, secureRandomBytes, type RandomBytes } from './session-token.js';
import type { Account, Membership, UserDirectory } from './user-directory.js';
import { checkPassword } from './verify-credentials.js';
import { verifyPassword } from './password.js';
import { createHashGate, type HashGate } from './create-hash-gate.js';
import { createDeviceCookie, type DeviceCookieOptions } from './device-cookie.js';
import { normalizeEmail } from './user-directory.js';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import { withStoreSpans } from '../telemetry/spans.js';
import { consoleLogger, type Logger } from '../logging/logger.js';
import { pruneAuditTrails, type AuditEvent, type AuditStore } from '../audit/audit-store.js';
import { hashPassword } from './password.js';
import { listOwnSessions, revokeOwnSession } from './own-sessions.js';
import { createAccountAudit, type AccountAudit } from './account-audit.js';
import type {
  Admission,
  LoginResult,
  SelectProjectResult,
  SessionAdmission,
  SessionKernel,
  SessionModule,
  SessionModuleApis,
  SessionModuleParts,
  SessionService,
  SignInClient,
  SignInMethod,
} from './session-service.js';

export type {
  LoginInput,
  LoginResult,
  SelectProjectResult,
  SessionService,
  SignInClient,
  SignInMethod,
} from './session-service.js';

/** Options of {@link createSessionService}. */
export interface SessionServiceOptions<Modules extends readonly SessionModule[] = readonly SessionModule[]> {
  store: SessionStore;
  directory: UserDirectory;
  /**
   * Reads a session and its account in one call, e.g. `createPostgresStores(…).sessionLookup`: one
   * round trip per request instead of two. It must read the same data as `store` and `directory`.
   * @default `store.get`, then `directory.getAccount`
   */
  lookup?: SessionLookup;
  cookie?: SessionCookieOptions;
  /** Sliding idle timeout. @default 7_200_000 (2 h) */
  idleTimeoutMs?: number;
  /** Absolute lifetime from login, never extended by activity. @default 43_200_000 (12 h) */
  absoluteTimeoutMs?: number;
  /** Least time between two idle-expiry writes of one session. @default 60_000 */
  renewIntervalMs?: number;
  /** Server-side secret; when set, token secrets are stored as HMAC-SHA-256 instead of SHA-256. */
  pepper?: string;
  /**
   * scrypt parameters of a hash upgraded at login and of the decoy checked for unknown emails (see
   * `verifyCredentials`); give the directory the same ones for the hashes it writes.
   * @default N=2^17, r=8, p=1 (those of `hashPassword`)
   */
  passwordHash?: PasswordHashOptions;
  /**
   * Bounds the password checks of this process (see `createHashGate`): past its short queue a login
   * is refused at once with `{ ok: false, reason: 'busy' }` (the handler answers 503 `unavailable`
   * with `Retry-After`), before any work. `false` lets every check queue on libuv's pool.
   * @default createHashGate(): as many at once as the thread pool and the cores allow, twice that waiting
   */
  hashGate?: HashGate | false;
  /**
   * The device cookie (`<prefix>_device`, see `createDeviceCookie`): issued with every sign-in, bound
   * to the account's email; a sign-in that carries one for its email waits in the hash gate's
   * priority lane, ahead of unknown clients. `false` issues none.
   * @default { key: pepper (else random per process), maxAgeSeconds: 2592000 }
   */
  deviceCookie?: DeviceCookieOptions | false;
  /**
   * The audit trail (`createPostgresStores(…).auditStore`, or any `AuditStore`): every sign-in by any
   * method, failed password sign-ins of existing accounts, and the team's changes are appended to the
   * trail of the project they concern. Off unless given. With SQL team stores, give the audit store of
   * their own database: they append the records of memberships, policies and invitations in their own
   * transactions (`appendsAudit`), to the trail of that database.
   */
  audit?: AuditStore;
  /**
   * How long audit records are kept: `deleteExpired()` prunes each project's trail of older ones (at
   * most once an hour), a prefix of the chain that leaves the rest verifiable. Unset: kept for ever.
   */
  auditRetentionMs?: number;
  /**
   * Feature modules (`createTeamModule(…)`, …), created in this order over the kernel: each adds its
   * routes, its API (`service.modules[name]`) and its sweeps. Two modules of one name are refused.
   * @default []
   */
  modules?: Modules;
  /** Clock in epoch milliseconds. @default Date.now */
  now?: () => number;
  /** Random source for tokens. @default crypto.getRandomValues */
  randomBytes?: RandomBytes;
  /**
   * Told about an idle-expiry renewal that failed after its read was answered (with a store that
   * has `renew`, reads do not wait for it); the next read of that session renews again.
   * @default logger.error
   */
  onRenewError?: (error: unknown) => void;
  /** Where the default `onRenewError` reports. @default consoleLogger */
  logger?: Logger;
}

const maxRotationAttempts = 5;

/**
 * Creates the session service.
 *
 * @example
 * const sessions = createSessionService({
 *   store: createMemorySessionStore(),
 *   directory,
 *   cookie: { prefix: 'deskpilot' },
 * });
 * const result = await sessions.login({ email: 'alice@example.com', password: 'alice-demo-password' });
 * if (result.ok) response.headers.append('set-cookie', result.setCookie);
 */
export function createSessionService<const Modules extends readonly SessionModule[] = []>(
  options: SessionServiceOptions<Modules>,
): SessionService<Modules> {
  refuseRetiredOptions(options);
  const context = resolveSessionContext(options);
  const { store, directory } = context;
  const credentialOptions = { passwordHash: options.passwordHash };
  const hashGate = options.hashGate === false ? undefined : (options.hashGate ?? createHashGate());
  const device = deviceCookieOf(options, context.now);

  const parts: Array<SessionModuleParts<unknown>> = [];
  const admit = (request: SessionAdmission) => admitted(parts, request);
  const startSession: StartSession = (account, input) =>
    startSessionFor(context, { device, audit: options.audit, admit }, account, input);
  const accountAudit = createAccountAudit(options.audit, context, options.logger ?? consoleLogger);

  const pruneAudit = auditRetention(options, context.now);
  const modules = createModules(
    options.modules ?? [],
    kernelOf(options, context, {
      hashGate,
      startSession,
      admit,
      signOut: (cookie) => signOut(context, accountAudit, cookie),
      accountAudit,
      parts: () => parts,
    }),
  );
  parts.push(...modules.parts);

  return {
    context,
    modules: modules.apis as SessionModuleApis<Modules>,
    moduleRoutes: (deps) => modules.parts.flatMap((part) => part.routes?.(deps) ?? []),
    signOutCookies: modules.parts.flatMap((part) => part.clearOnSignOut ?? []),
    resolve: (cookieHeader) => resolveSession(cookieHeader, context),

    async login(input) {
      // A browser this account signed in from before waits ahead of unknown clients (a flood).
      const email = normalizeEmail(input.email);
      const knownDevice = device?.recognize(input.cookieHeader, email);
      const checked = await checkCredentials(hashGate, knownDevice !== undefined, () =>
        checkPassword(directory, input.email, input.password, credentialOptions),
      );
      if (checked === 'busy') return { ok: false, reason: 'busy' };
      if (!checked) {
        if (knownDevice !== undefined) device!.noteFailure(knownDevice);
        if (options.audit) auditFailedSignIn(context, options.audit, email, options.logger ?? consoleLogger);
        return { ok: false, reason: 'invalid_credentials' };
      }
      const result = await startSession(checked.account, {
        projectKey: input.projectKey,
        cookieHeader: input.cookieHeader,
        method: 'password',
        client: input.client,
      });
      // The password checked may have been replaced (a reset) while it was checked: then the reset's
      // revocation may have run before this session existed. It must not outlive the password.
      if (result.ok && !(await stillTheirPassword(directory, email, input.password, checked.passwordHash))) {
        await store.delete(result.session.id);
        return { ok: false, reason: 'invalid_credentials' };
      }
      return result;
    },

    selectProject: (cookieHeader, target) =>
      switchProject(context, { admit, audit: options.audit }, cookieHeader, target),

    logout: (cookieHeader) => signOut(context, accountAudit, cookieHeader),

    listSessions: (cookieHeader) => listOwnSessions(context, cookieHeader),
    revokeSession: (cookieHeader, id) => revokeOwnSession(context, options.audit, cookieHeader, id),

    logoutEverywhere: (cookieHeader) => signOutEverywhere(context, accountAudit, cookieHeader),

    deleteExpired: () => deleteExpiredRecords(options, context, pruneAudit, modules.parts),
  };
}

/** Switches the cookie's session to another of its memberships, as the modules let it: a new token, the same expiry. */
async function switchProject(
  context: SessionContext,
  { admit, audit }: { admit: (request: SessionAdmission) => Promise<Admission>; audit: AuditStore | undefined },
  cookieHeader: string | null | undefined,
  target: { projectKey: string; clientId?: string | undefined },
): Promise<SelectProjectResult> {
  const token = context.cookie.read(cookieHeader);
  if (token === null) return { ok: false, reason: 'unauthenticated' };
  for (let attempt = 0; attempt < maxRotationAttempts; attempt++) {
    const current = await authenticateToken(token, context);
    if (!current) return { ok: false, reason: 'unauthenticated' };
    const membership = findMembership(current.account, target.projectKey, target.clientId);
    if (!membership) return { ok: false, reason: 'forbidden' };
    const request: SessionAdmission = {
      kind: 'switch',
      account: current.account,
      projectKey: membership.projectKey,
      cookieHeader,
      session: { id: current.record.id, signedInAt: current.record.createdAt },
    };
    const admission = await admit(request);
    if (!admission.ok) return admission;
    // Rotation keeps the absolute expiry: switching projects never extends a session.
    const { record, setCookie } = issueSession(
      context,
      {
        userId: current.record.userId,
        projectKey: membership.projectKey,
        clientId: membership.clientId,
        createdAt: current.record.createdAt,
        expiresAt: current.record.expiresAt,
        ...signedInFrom(current.record),
      },
      context.now(),
    );
    if (await context.store.replace(current.record.id, current.record.version, record)) {
      const refused = await admittedStill(context, admit, request, record.id);
      if (refused) return refused;
      await recordAdmittedSwitch(context, audit, current.account, record, admission.audit);
      return { ok: true, session: toSession(record, current.account, membership), setCookie };
    }
    // Another request wrote this session since we read it: read it again and retry.
  }
  throw new DeskpilotError('conflict', { detail: 'The session kept changing during the project switch. Try again.' });
}

/**
 * Asks the modules again once the session exists, and ends it if they now refuse: a rule taken up
 * between the first answer and the write (an organisation now requiring its provider, whose sweep of
 * its sessions ran before this one was written) holds for it too. Null when still let in.
 */
async function admittedStill(
  context: SessionContext,
  admit: (request: SessionAdmission) => Promise<Admission>,
  request: SessionAdmission,
  sessionId: string,
): Promise<Exclude<Admission, { ok: true }> | null> {
  const answer = await admit(request).catch(async (error: unknown) => {
    await context.store.delete(sessionId).catch(() => {});
    throw error;
  });
  if (answer.ok) return null;
  await context.store.delete(sessionId);
  return answer;
}

/** The live session of a `Cookie` header, without renewing it. */
async function currentSession(context: SessionContext, cookieHeader: string | null | undefined) {
  const token = context.cookie.read(cookieHeader);
  return token === null ? null : authenticateToken(token, context);
}

/** Ends the cookie's session, recorded in its project's audit trail; false when there was none. */
async function signOut(context: SessionContext, accountAudit: AccountAudit, cookieHeader: string | null | undefined) {
  const current = await currentSession(context, cookieHeader);
  if (!current || !(await context.store.delete(current.record.id))) return false;
  const { record } = current;
  const event = { type: 'sign-out', session: record.id, data: { scope: 'this' }, projectKey: record.projectKey };
  await accountAudit(current.account, event);
  return true;
}

/** Ends every session of the cookie's user, recorded in each of their projects' trails: how many, null when signed out. */
async function signOutEverywhere(
  context: SessionContext,
  accountAudit: AccountAudit,
  cookieHeader: string | null | undefined,
) {
  const current = await currentSession(context, cookieHeader);
  if (!current) return null;
  const sessions = await context.store.deleteByUser(current.record.userId);
  const data = { scope: 'everywhere', sessions };
  await accountAudit(current.account, { type: 'sign-out', session: current.record.id, data });
  return sessions;
}

/** Deletes expired sessions, one-time links, passkey challenges and invitations; resolves to the sessions deleted. */
async function deleteExpiredRecords(
  options: SessionServiceOptions,
  context: SessionContext,
  pruneAudit: () => Promise<unknown>,
  modules: ReadonlyArray<SessionModuleParts<unknown>>,
): Promise<number> {
  const now = context.now();
  const [sessions] = await Promise.all([
    context.store.deleteExpired(now),
    ...modules.map((module) => module.deleteExpired?.(now)),
  ]);
  // After the sweep, and on its own: a trail that cannot be pruned now never keeps sessions alive.
  await pruneAudit().catch((error: unknown) =>
    (options.logger ?? consoleLogger).error('audit retention failed; the next sweep tries again', error),
  );
  return sessions;
}

/** Retention of the audit trail: prunes what is older than `auditRetentionMs`, at most once an hour. */
function auditRetention(options: SessionServiceOptions, now: () => number): () => Promise<unknown> {
  const { audit, auditRetentionMs } = options;
  if (auditRetentionMs === undefined || !audit) return async () => 0;
  positive(auditRetentionMs, 'auditRetentionMs');
  let next = 0;
  return async () => {
    const at = now();
    if (at < next) return 0;
    const pruned = await pruneAuditTrails(audit, at - auditRetentionMs);
    next = at + 60 * 60 * 1000;
    return pruned;
  };
}

/** The service's device cookie, unless turned off. */
function deviceCookieOf(options: SessionServiceOptions, now: () => number) {
  if (options.deviceCookie === false) return undefined;
  return createDeviceCookie({
    prefix: options.cookie?.prefix ?? 'deskpilot',
    secure: options.cookie?.secure ?? true,
    key: options.deviceCookie?.key ?? options.pepper,
    maxAgeSeconds: options.deviceCookie?.maxAgeSeconds,
    now,
    randomBytes: options.randomBytes,
  });
}

/** What a verified sign-in asks of the kernel's one way in. */
interface SignInInput {
  projectKey?: string | undefined;
  cookieHeader?: string | null | undefined;
  method: SignInMethod;
  /** The identity provider a single sign-on went through. */
  provider?: string | undefined;
  client?: SignInClient | undefined;
}

/** Starts a session for a verified sign-in. */
type StartSession = (account: Account, input: SignInInput) => Promise<LoginResult>;

/** Every module's answer to a session about to open: the first refusal, else what their audit records add. */
async function admitted(
  parts: ReadonlyArray<SessionModuleParts<unknown>>,
  request: SessionAdmission,
): Promise<Admission> {
  let audit: Record<string, string | boolean> = {};
  for (const part of parts) {
    if (!part.admit) continue;
    const answer = await part.admit(request);
    if (!answer.ok) return answer;
    audit = { ...audit, ...answer.audit };
  }
  return { ok: true, audit };
}

/**
 * The membership a sign-in opens, and what its audit record adds: the one asked for, or the first the
 * modules let in; the first refusal when they let in none.
 */
async function landing(
  account: Account,
  { projectKey, cookieHeader, method, provider }: SignInInput,
  admit: (request: SessionAdmission) => Promise<Admission>,
): Promise<{ membership: Membership; audit: Record<string, string | boolean> } | Exclude<LoginResult, { ok: true }>> {
  const asked = projectKey === undefined ? undefined : findMembership(account, projectKey);
  const candidates = projectKey === undefined ? account.memberships : asked ? [asked] : [];
  let refusal: Exclude<Admission, { ok: true }> | undefined;
  for (const membership of candidates) {
    const request = { kind: 'sign-in', account, projectKey: membership.projectKey, cookieHeader, method, provider };
    const answer = await admit(request as SessionAdmission);
    if (answer.ok) return { membership, audit: answer.audit ?? {} };
    refusal ??= answer;
  }
  return refusal ?? { ok: false, reason: 'forbidden' };
}

/** Where a session was signed in from, as its record keeps it (bounded: headers are the client's to fill). */
function signedInFrom(client: {
  clientAddress?: string;
  userAgent?: string;
}): Pick<SessionRecord, 'clientAddress' | 'userAgent'> {
  return {
    ...(client.clientAddress ? { clientAddress: client.clientAddress.slice(0, 100) } : {}),
    ...(client.userAgent ? { userAgent: client.userAgent.slice(0, 400) } : {}),
  };
}

/**
 * A new session for an account whose sign-in was verified (password, passkey, single sign-on, an
 * accepted invitation): the one way in, and the one place a sign-in enters the audit trail.
 */
async function startSessionFor(
  context: SessionContext,
  {
    device,
    audit,
    admit,
  }: {
    device: ReturnType<typeof deviceCookieOf>;
    audit: AuditStore | undefined;
    admit: (request: SessionAdmission) => Promise<Admission>;
  },
  account: Account,
  input: SignInInput,
): Promise<LoginResult> {
  const { cookieHeader, method, client } = input;
  const landed = await landing(account, input, admit);
  if (!('membership' in landed)) return landed;
  const { membership } = landed;

  // A session that came with the sign-in request is revoked, never adopted or reused.
  const previousToken = context.cookie.read(cookieHeader);
  const previous = previousToken === null ? null : await authenticateToken(previousToken, context);
  if (previous) await context.store.delete(previous.record.id);

  const now = context.now();
  const { record, setCookie } = issueSession(
    context,
    {
      userId: account.user.id,
      projectKey: membership.projectKey,
      clientId: membership.clientId,
      createdAt: now,
      expiresAt: now + context.absoluteTimeoutMs,
      ...signedInFrom({ clientAddress: client?.address, userAgent: client?.userAgent ?? undefined }),
    },
    now,
  );
  await context.store.create(record);
  const { projectKey } = membership;
  const request: SessionAdmission = {
    kind: 'sign-in',
    account,
    projectKey,
    cookieHeader,
    method,
    provider: input.provider,
  };
  const refused = await admittedStill(context, admit, request, record.id);
  if (refused) return refused;
  // A sign-in the trail cannot record does not happen: fail closed.
  await recordOrEnd(context, audit, {
    projectKey: membership.projectKey,
    type: 'sign-in',
    actor: account.user.email,
    session: record.id,
    subject: account.user.id,
    data: { ...landed.audit, method },
    at: now,
  });
  const session = toSession(record, account, membership);
  const setDeviceCookie = device?.issue(account.user.email);
  return { ok: true, session, setCookie, ...(setDeviceCookie === undefined ? {} : { setDeviceCookie }) };
}

/**
 * A switch a module let in on terms of its own (`breakGlass`: an organisation's admin into a project
 * its provider rules) is recorded in the project's trail as a sign-in is; a switch the trail cannot
 * record does not happen (the session ends).
 */
async function recordAdmittedSwitch(
  context: SessionContext,
  audit: AuditStore | undefined,
  account: Account,
  record: SessionRecord,
  terms: Record<string, string | boolean> | undefined,
): Promise<void> {
  if (!terms || Object.keys(terms).length === 0) return;
  await recordOrEnd(context, audit, {
    projectKey: record.projectKey,
    type: 'project-switch',
    actor: account.user.email,
    session: record.id,
    subject: account.user.id,
    data: terms,
    at: context.now(),
  });
}

/** Appends the record of a session just opened (`event.session`); a trail that cannot record it ends the session. */
async function recordOrEnd(
  context: SessionContext,
  audit: AuditStore | undefined,
  event: AuditEvent & { session: string },
): Promise<void> {
  if (!audit) return;
  try {
    await audit.append(event);
  } catch (error) {
    await context.store.delete(event.session).catch(() => {});
    throw error;
  }
}

/**
 * Whether the password a sign-in checked is still the account's: its hash unchanged, or replaced by one
 * of the same password (another sign-in's upgrade won the race). Not after a reset to another password.
 */
async function stillTheirPassword(
  directory: UserDirectory,
  email: string,
  password: string,
  checkedHash: string,
): Promise<boolean> {
  const current = await directory.findCredentials(email);
  if (!current) return false;
  return current.passwordHash === checkedHash || verifyPassword(password, current.passwordHash);
}

/** What the kernel gives its modules (all but `module`, which each gets for the modules before it). */
function kernelOf(
  options: SessionServiceOptions,
  context: SessionContext,
  {
    hashGate,
    startSession,
    admit,
    signOut: signOutCookie,
    accountAudit,
    parts,
  }: {
    hashGate: HashGate | undefined;
    startSession: StartSession;
    admit: (request: SessionAdmission) => Promise<Admission>;
    signOut: (cookieHeader: string | null | undefined) => Promise<boolean>;
    accountAudit: AccountAudit;
    /** The modules' parts, once they are all created. */
    parts: () => ReadonlyArray<SessionModuleParts<unknown>>;
  },
): Omit<SessionKernel, 'module'> {
  return {
    context,
    audit: options.audit,
    logger: options.logger ?? consoleLogger,
    cookie: { prefix: options.cookie?.prefix ?? 'deskpilot', secure: options.cookie?.secure ?? true },
    pepper: options.pepper,
    startSession,
    admit,
    signOut: signOutCookie,
    hashPassword: (password) => checkCredentials(hashGate, false, () => hashPassword(password, options.passwordHash)),
    checkPassword: async (email, password) => {
      const checked = await checkCredentials(hashGate, false, () =>
        checkPassword(context.directory, email, password, { passwordHash: options.passwordHash }),
      );
      return checked === 'busy' ? 'busy' : checked && { userId: checked.account.user.id };
    },
    recordAccountEvent: accountAudit,
    async revokeCredentials(userId) {
      const revoked: string[] = [];
      for (const part of parts()) {
        const name = await part.revokeCredentials?.(userId);
        if (name !== undefined) revoked.push(name);
      }
      return revoked;
    },
    async signsInElsewhere(userId) {
      for (const part of parts()) if (await part.signsInElsewhere?.(userId)) return true;
      return false;
    },
  };
}

/** The options that became modules: refused, so that a feature an app relies on is never dropped in silence. */
const retiredOptions: Record<string, string> = {
  team: 'createTeamModule',
  recovery: 'createRecoveryModule',
  passkeys: 'createPasskeysModule',
  sso: 'createSsoModule',
  stepUp: 'createStepUpModule',
};
/** Where the modules of other packages come from. */
const modulePackages: Record<string, string> = { passkeys: '@deskpilot/passkeys', sso: '@deskpilot/sso' };

function refuseRetiredOptions(options: object): void {
  for (const [option, factory] of Object.entries(retiredOptions))
    if (Object.hasOwn(options, option) && (options as Record<string, unknown>)[option] !== undefined)
      throw new TypeError(
        `createSessionService's ${option} option is a module now: modules: [${factory}(…)]` +
          (modulePackages[option] ? ` from ${modulePackages[option]}.` : '.'),
      );
}

/** Creates the modules in order over the kernel; a second module of one name is refused. */
function createModules(
  modules: readonly SessionModule[],
  kernel: Omit<SessionKernel, 'module'>,
): { apis: Record<string, unknown>; parts: Array<SessionModuleParts<unknown>> } {
  const apis: Record<string, unknown> = {};
  const parts: Array<SessionModuleParts<unknown>> = [];
  for (const module of modules) {
    if (Object.hasOwn(apis, module.name)) throw new TypeError(`Two session modules are named ${module.name}.`);
    const created = module.create({
      ...kernel,
      module: <Api>(name: string) => {
        // Only a module given before: one given after is not made yet, and would be missed in silence.
        if (!Object.hasOwn(apis, name) && modules.some((later) => later.name === name))
          throw new TypeError(`The session module ${module.name} uses ${name}: give ${name} before it.`);
        return apis[name] as Api | undefined;
      },
    });
    apis[module.name] = created.api;
    parts.push(created);
  }
  return { apis, parts };
}

/**
 * Records a refused password sign-in of an existing account in the trail of each of its projects. On a
 * later turn of the event loop, after the answer: an address with an account must not answer later
 * than one without (no enumeration by timing).
 */
function auditFailedSignIn(context: SessionContext, audit: AuditStore, email: string, logger: Logger): void {
  setTimeout(() => {
    void (async () => {
      const credentials = await context.directory.findCredentials(email);
      const account = credentials && (await context.directory.getAccount(credentials.userId));
      if (!account) return;
      const at = context.now();
      for (const projectKey of new Set(account.memberships.map((membership) => membership.projectKey)))
        await audit.append({
          projectKey,
          type: 'sign-in-failed',
          actor: email,
          session: null,
          subject: account.user.id,
          data: { method: 'password' },
          at,
        });
    })().catch((error: unknown) => logger.error('a failed sign-in could not be recorded in the audit trail', error));
  }, 0);
}

/** Runs the password check through the gate: `busy` at once when its lane is full. */
async function checkCredentials<T>(
  gate: HashGate | undefined,
  priority: boolean,
  check: () => Promise<T>,
): Promise<T | 'busy'> {
  const entering = gate?.enter({ priority });
  if (entering === null) return 'busy';
  const pass = await entering;
  if (pass === null) return 'busy';
  try {
    return await check();
  } finally {
    pass?.release();
  }
}

function resolveSessionContext(options: SessionServiceOptions): SessionContext {
  return {
    // Each call a span of its own when the host traces (OpenTelemetry); a no-op otherwise.
    store: withStoreSpans(options.store, 'session_store'),
    directory: withStoreSpans(options.directory, 'user_directory'),
    lookup: withStoreSpans(options.lookup ?? createSessionLookup(options), 'session_lookup'),
    cookie: createSessionCookie(options.cookie),
    idleTimeoutMs: positive(options.idleTimeoutMs ?? 2 * 60 * 60 * 1000, 'idleTimeoutMs'),
    absoluteTimeoutMs: positive(options.absoluteTimeoutMs ?? 12 * 60 * 60 * 1000, 'absoluteTimeoutMs'),
    renewIntervalMs: positive(options.renewIntervalMs ?? 60 * 1000, 'renewIntervalMs'),
    hashSecret: createSecretHasher(options.pepper),
    now: options.now ?? Date.now,
    randomBytes: options.randomBytes ?? secureRandomBytes,
    onRenewError: oncePerError(
      options.onRenewError ??
        ((error) =>
          (options.logger ?? consoleLogger).error('session renewal failed; the next read renews again', error)),
    ),
  };
}

/** What a new session record is made of before its token exists. */
type SessionBase = Omit<SessionRecord, 'id' | 'secretHash' | 'version' | 'idleExpiresAt'>;

/** A record for a fresh token, with its `Set-Cookie`. */
function issueSession(
  context: SessionContext,
  base: SessionBase,
  now: number,
): { record: SessionRecord; setCookie: string } {
  const token = createSessionToken(context.randomBytes);
  const record: SessionRecord = {
    ...base,
    id: token.id,
    secretHash: context.hashSecret(token.secret),
    idleExpiresAt: Math.min(now + context.idleTimeoutMs, base.expiresAt),
    version: 1,
  };
  // The cookie lives as long as the session can: the server enforces the idle timeout.
  return { record, setCookie: context.cookie.serialize(token.value, (base.expiresAt - now) / 1000) };
}

/** A store that writes renewals together fails them together, with one error: reported once. */
function oncePerError(report: (error: unknown) => void): (error: unknown) => void {
  const reported = new WeakSet<object>();
  return (error) => {
    if (typeof error === 'object' && error !== null) {
      if (reported.has(error)) return;
      reported.add(error);
    }
    report(error);
  };
}

function positive(value: number, name: string): number {
  if (!(value > 0) || !Number.isFinite(value)) throw new TypeError(`${name} must be a positive number`);
  return value;
}
