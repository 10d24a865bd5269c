import { SluiceError } from '../../core/errors.js';
import type { Interceptor } from '../chain.js';
import type { TenantDirectory } from '../ports.js';

/** Who is sending: the tenant owning the bearer API key. */
export function authInterceptor(directory: TenantDirectory): Interceptor {
  return {
    name: 'auth',
    async run(context) {
      const tenant = context.apiKey ? await directory.tenantByApiKey(context.apiKey) : undefined;
      if (!tenant) throw new SluiceError('UNAUTHORIZED', 'a valid API key is required: Authorization: Bearer <key>');
      context.tenant = tenant;
      return undefined;
    },
  };
}
