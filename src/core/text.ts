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

/**
 * Where parsed JSON `value` holds a NUL (U+0000), in a string or in a key: the path of the first
 * such field (`rules[0].name`; for a key, the object holding it), `''` for `value` itself, or
 * undefined when there is none. PostgreSQL refuses NUL in text outright, and no field of the API
 * has a use for it. Iterative: a body may nest deeper than the stack.
 */
export function nulField(value: unknown): string | undefined {
  const pending: [unknown, string][] = [[value, '']];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, path] = next;
    if (typeof node === 'string') {
      if (node.includes('\u0000')) return path;
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) pending.push([node[i], `${path}[${i}]`]);
    } else if (node !== null && typeof node === 'object') {
      const entries = Object.entries(node);
      if (entries.some(([key]) => key.includes('\u0000'))) return path;
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        pending.push([child, path === '' ? key : `${path}.${key}`]);
      }
    }
  }
  return undefined;
}
