import { requireSession, toFetchResponse } from '@deskpilot/core';
import { sessions } from '../../../lib/deskpilot.ts';

export const runtime = 'nodejs';
export async function GET(request: Request) {
  const required = await requireSession(request.headers.get('cookie'), sessions);
  if (!required.ok) return toFetchResponse(required.response);
  return Response.json({ email: required.session.user.email });
}
