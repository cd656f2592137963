/** Where Deskpilot reports what an operator should see: security warnings and unexpected errors. */
export interface Logger {
  warn(message: string, details?: unknown): void;
  error(message: string, details?: unknown): void;
}

/** The default {@link Logger}: `console`, each message prefixed with `[deskpilot]`. */
export const consoleLogger: Logger = {
  // eslint-disable-next-line no-console
  warn: (message, details) => console.warn(`[deskpilot] ${message}`, ...(details === undefined ? [] : [details])),
  // eslint-disable-next-line no-console
  error: (message, details) => console.error(`[deskpilot] ${message}`, ...(details === undefined ? [] : [details])),
};
