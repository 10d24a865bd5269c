import { SluiceError } from '../../core/errors.js';
import type { Interceptor } from '../chain.js';

/** A suspended tenant sends nothing. */
export function tenantStatusInterceptor(): Interceptor {
  return {
    name: 'tenant-status',
    run(context) {
      if (context.tenant?.status !== 'active') throw new SluiceError('TENANT_SUSPENDED', 'this tenant is suspended');
      return undefined;
    },
  };
}
