import type { UIMessage } from 'ai';

/**
 * What a conversation list shows of a message (the SQL stores' `preview` column): its text parts
 * joined with a line feed, cut to 200 characters (code points); '' when it has none.
 */
export function messagePreview(message: UIMessage): string {
  const texts = message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : []));
  return Array.from(texts.join('\n')).slice(0, 200).join('');
}
