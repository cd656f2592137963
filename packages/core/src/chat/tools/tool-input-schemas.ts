import { z } from 'zod';

/** A record id as the backend shows it (e.g. `ORD-1001`): trimmed, short, no spaces or slashes. */
export const recordIdSchema = z
  .string()
  .trim()
  .min(1)
  .max(64)
  // Ids end up in backend URLs and queries: only characters real ids use.
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, 'Use the id exactly as shown, e.g. ORD-1001');

/** An email address, trimmed and lower-cased. */
export const emailSchema = z.string().trim().toLowerCase().max(254).check(z.email());

/** How many results a search returns. */
export const limitSchema = z.number().int().min(1).max(20).default(5).describe('Most results to return (1-20).');

/** Free text the user gave as the reason for a change. */
export const reasonSchema = z.string().trim().min(1).max(500).describe("Why, in the user's words.");
