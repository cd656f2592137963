import type { LoginResult, SignInClient } from '../session/session-service.js';
import type { TeamAdmin, TeamResult } from './create-team-admin.js';

/** Team administration, and an invitation accepted by someone without an account, who is then signed in. */
export interface SessionTeam extends Omit<TeamAdmin, 'acceptAsNewAccount'> {
  acceptAsNewAccount(
    input: { token: string; name: string; password: string },
    cookieHeader: string | null | undefined,
    client?: SignInClient,
  ): Promise<TeamResult<Extract<LoginResult, { ok: true }>>>;
}
