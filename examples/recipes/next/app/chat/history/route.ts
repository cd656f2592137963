// Next.js reads `runtime` from each route file itself: it is declared here, not re-exported.
export const runtime = 'nodejs';
export { OPTIONS, POST } from '../route.ts';
