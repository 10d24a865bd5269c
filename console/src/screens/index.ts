/** The console's screens, in the navigation's order: one file each. */
import type { FunctionComponent } from 'preact';
import { BansScreen } from './bans.js';
import { BlacklistsScreen } from './blacklists.js';
import { FraudScreen } from './fraud.js';
import { MessagesScreen } from './messages.js';
import { MetricsScreen } from './metrics.js';
import { ProvidersScreen } from './providers.js';
import { QuietHoursScreen } from './quiet-hours.js';
import { RiskScreen } from './risk.js';
import { RulesScreen } from './rules.js';
import { TemplatesScreen } from './templates.js';
import { TenantScreen } from './tenant.js';
import { TenantsScreen } from './tenants.js';
import { WebhooksScreen } from './webhooks.js';

export interface Screen {
  /** The hash's first segment: `#/<id>/<args…>`. */
  id: string;
  title: string;
  component: FunctionComponent<{ args: string[] }>;
  /** Reached from another screen, not listed in the navigation. */
  hidden?: boolean;
}

export const SCREENS: Screen[] = [
  { id: 'tenants', title: 'Tenants', component: TenantsScreen },
  { id: 'tenant', title: 'Tenant', component: TenantScreen, hidden: true },
  { id: 'messages', title: 'Messages', component: MessagesScreen },
  { id: 'rules', title: 'Rules', component: RulesScreen },
  { id: 'bans', title: 'Bans', component: BansScreen },
  { id: 'risk', title: 'Risk rule sets', component: RiskScreen },
  { id: 'fraud', title: 'SMS fraud', component: FraudScreen },
  { id: 'templates', title: 'Templates', component: TemplatesScreen },
  { id: 'quiet-hours', title: 'Quiet hours', component: QuietHoursScreen },
  { id: 'webhooks', title: 'Webhooks', component: WebhooksScreen },
  { id: 'blacklists', title: 'Blacklists', component: BlacklistsScreen },
  { id: 'providers', title: 'Providers', component: ProvidersScreen },
  { id: 'metrics', title: 'Live charts', component: MetricsScreen },
];
