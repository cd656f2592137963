// How the reference servers fail to start: one plain line on stderr and an exit code, in their own
// process or inside `npm start`'s.
import { describeError } from '@deskpilot/core/session';

/**
 * The exit code of a start that failed with `error`: 2 when another process holds the embedded
 * database's directory (like a bad configuration, starting again will not help), else 1.
 */
export function startFailureExitCode(error: unknown): number {
  return error instanceof Error && error.name === 'DataDirectoryLockedError' ? 2 : 1;
}

/** A server that could not start: the plain line to print and the exit code (2: starting again will not help). */
export class StartFailure extends Error {
  override name = 'StartFailure';
  readonly exitCode: number;
  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** For a server's entry file: prints a failed start as one plain line on stderr and exits with its code. */
export function exitOnStartFailure(name: string) {
  return (error: unknown): never => {
    const failure = error instanceof StartFailure ? error : new StartFailure(String(error), 1);
    console.error(`[${name}] ${failure.message}`);
    process.exit(failure.exitCode);
  };
}

/** The configuration `read` finds in `env`; a bad one is a {@link StartFailure} with exit code 2. */
export function configFrom<Config>(
  read: (env: Record<string, string | undefined>) => Config,
  env: Record<string, string | undefined>,
): Config {
  try {
    return read(env);
  } catch (error) {
    throw new StartFailure((error as Error).message, 2);
  }
}

/** For a start that failed while opening its stores or backends: `cannot start: <why>`, with its exit code. */
export function cannotStart(error: unknown): never {
  throw new StartFailure(`cannot start: ${describeError(error)}`, startFailureExitCode(error));
}
