// `/chat/conversations`, `/update`, `/branch` and `/delete`: the chat handler tells them apart (and answers 404
// for any other path under it). Next.js reads `runtime` from each route file itself.
export const runtime = 'nodejs';
export { OPTIONS, POST } from '../../route.ts';
