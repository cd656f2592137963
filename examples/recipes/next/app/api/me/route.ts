import { DeskpilotError, problemResponse, toFetchResponse } from '@deskpilot/core';
import { sessions } from '../../../lib/deskpilot.ts';

export const runtime = 'nodejs';
export async function GET(request: Request) {
  const resolved = await sessions.resolve(request.headers.get('cookie'));
  if (!resolved) return toFetchResponse(problemResponse(new DeskpilotError('unauthenticated', { detail: 'No valid session.' })));
  return Response.json({ email: resolved.session.user.email });
}
