import { z } from 'zod';
import { validText } from '../../validation/input-schemas.js';

const context = z.unknown().optional();

/** The body of `POST /chat/conversations`. */
export const conversationListBodySchema = z.strictObject({
  context,
  /** The archive instead of the list. */
  archived: z.boolean().optional(),
  /** `nextCursor` of the page before. */
  cursor: z.string().max(400).optional(),
  limit: z.int().min(1).max(100).optional(),
});

/** A title a person gives: trimmed, 1 to 120 characters of valid text. */
const titleSchema = validText()
  .trim()
  .min(1, 'A title cannot be empty')
  .max(120)
  .refine((title) => !/[\u0000-\u001f\u007f]/u.test(title), 'A title is one line of text');

/** The body of `POST /chat/conversations/update`: a new title, or archive/unarchive, or both. */
export const conversationUpdateBodySchema = z
  .strictObject({ context, sessionId: z.uuid(), title: titleSchema.optional(), archived: z.boolean().optional() })
  .refine((body) => body.title !== undefined || body.archived !== undefined, {
    message: 'Give a title, archived, or both',
  });

/** The body of `POST /chat/conversations/branch`: the message whose branch becomes the active one. */
export const conversationBranchBodySchema = z.strictObject({
  context,
  sessionId: z.uuid(),
  messageId: z.string().min(1).max(200),
});

/** The body of `POST /chat/conversations/delete`. */
export const conversationDeleteBodySchema = z.strictObject({ context, sessionId: z.uuid() });
