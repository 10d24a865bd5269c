import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { SluiceClient } from '../../../src/client/index.js';

export const ClientContext = createContext<SluiceClient | undefined>(undefined);

/** The signed-in client; screens render only inside a session. */
export function useClient(): SluiceClient {
  const client = useContext(ClientContext);
  if (!client) throw new Error('useClient outside a session');
  return client;
}
