/** What a command works with: the process settings, and the services of a runtime made for it. */
import type { Backend } from '../main/backend/backend.js';
import { withServices } from '../main/commands.js';
import type { Services } from '../services/contracts.js';
import { loadSettings, type Settings, settingGiven } from '../settings/settings.js';

export interface CommandContext {
  /** The environment's settings over the `--config` file's (or SLUICE_CONFIG's); throws SettingsError. */
  settings(): Settings;
  /** Whether the setting `variable` is given (environment or settings file), whatever its value. */
  given(variable: string): boolean;
  /**
   * Runs `work` on one of the services (tenants, rules, blacklists, templates...) of a runtime
   * made for one command (quiet logs, no HTTP), then closes the runtime. Operator commands need
   * no admin token: they work on the database. `backend` is the kind of backend that runtime chose.
   */
  withService<K extends keyof Services, T>(name: K, work: (service: Services[K], backend: Backend['kind']) => Promise<T>): Promise<T>;
}

/** A context whose settings file is `configFile()`, read when a command runs (after parsing). */
export function commandContext(configFile: () => string | undefined): CommandContext {
  const settings = () => loadSettings(process.env, configFile() ?? process.env.SLUICE_CONFIG);
  return {
    settings,
    given: (variable) => settingGiven(variable, process.env, configFile() ?? process.env.SLUICE_CONFIG),
    withService: (name, work) => withServices(settings(), (services, backend) => work(services[name], backend)),
  };
}
