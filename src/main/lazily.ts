/**
 * An object whose members are built at their first read, each once: a CLI command that uses one
 * service builds that service, and what it needs, and nothing else.
 */
export function lazily<T extends object>(factories: { [K in keyof T]: () => T[K] }): T {
  const target = {} as T;
  for (const key of Object.keys(factories) as (keyof T & string)[]) {
    let built = false;
    let value: T[typeof key];
    Object.defineProperty(target, key, {
      enumerable: true,
      get() {
        if (!built) {
          value = factories[key]();
          built = true;
        }
        return value;
      },
    });
  }
  return target;
}

/** A value built at its first call, once. */
export function once<T>(build: () => T): () => T {
  let built = false;
  let value: T;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value;
  };
}
