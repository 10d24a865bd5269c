/**
 * Hooks that run client calls and keep their error as a value for {@link ErrorAlert}: a screen
 * shows the API's stable code and message, never a thrown exception.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { ClientError, Result } from '../../../src/client/index.js';

export interface Action {
  busy: boolean;
  error: ClientError | undefined;
  /** Runs one call; its value, or undefined after showing its error. */
  run<T>(call: () => Promise<Result<T>>): Promise<T | undefined>;
  clear(): void;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ClientError>();
  const run = useCallback(async <T>(call: () => Promise<Result<T>>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      const result = await call();
      if (result.ok) return result.value;
      setError(result.error);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(undefined) };
}

export interface Loaded<T> {
  value: T | undefined;
  error: ClientError | undefined;
  loading: boolean;
  reload(): void;
}

/** Loads `load()` when `keys` change (and on `reload`); a stale answer never replaces a newer one. */
export function useLoad<T>(load: (() => Promise<Result<T>>) | undefined, keys: unknown[]): Loaded<T> {
  const [value, setValue] = useState<T>();
  const [error, setError] = useState<ClientError>();
  const [loading, setLoading] = useState(false);
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    if (!load) {
      setValue(undefined);
      setError(undefined);
      return;
    }
    const mine = ++latest.current;
    setLoading(true);
    load().then((result) => {
      if (mine !== latest.current) return;
      setLoading(false);
      if (result.ok) {
        setValue(result.value);
        setError(undefined);
      } else {
        setValue(undefined);
        setError(result.error);
      }
    });
    // The caller names what the load depends on (`keys`).
  }, [...keys, generation]);
  return { value, error, loading, reload: () => setGeneration((n) => n + 1) };
}
