import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { config } from 'zod';
import { App } from './app.tsx';
import './styles.css';

// The page's CSP forbids eval; tell zod (used by the AI SDK) not to probe for it.
config({ jitless: true });

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
