// Imported first by main.tsx: the page's Content-Security-Policy forbids eval, so zod (used by the AI
// SDK) must not probe for it while the other modules load.
import { config } from 'zod';

config({ jitless: true });
