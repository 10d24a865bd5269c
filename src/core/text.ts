/** Checks on text from callers, shared by the HTTP layer and the services. */

/**
 * Whether `text` holds a C0 control character or DEL (U+0000 to U+001F, U+007F): none belongs in an
 * id, a channel, a recipient or a cursor, and PostgreSQL refuses NUL in text outright.
 */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
