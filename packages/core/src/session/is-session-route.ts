/** True for the paths of the session routes (`/sessions` and below): what a session router serves and a studio proxies. */
export function isSessionRoute(path: string): boolean {
  return path === '/sessions' || path.startsWith('/sessions/');
}
