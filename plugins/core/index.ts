// The core module's code beyond its manifest: user management the generic
// CRUD cannot say (a password on create, role and company assignment) and the
// rules around role and user writes; webhooks: delivery of the tenant's events
// (a subscriber and a job), pings and replays; the console's dashboard page.
import type { PluginModule } from '../../core/plugin-api.ts';
import { createUser, setUserPassword } from './users.ts';
import { listUserCompanies, listUserRoles, setUserCompanies, setUserRoles } from './assignments.ts';
import { companyHooks, roleHooks, userHooks } from './hooks.ts';
import { webhookHooks } from './webhooks/hooks.ts';
import { deliverWebhook, webhookSubscriber } from './webhooks/deliver.ts';
import { pingWebhook, replayDelivery } from './webhooks/routes.ts';
import { dashboardPage } from './dashboard-page.ts';

export const handlers: PluginModule['handlers'] = { createUser, setUserPassword, listUserRoles, setUserRoles, listUserCompanies, setUserCompanies, pingWebhook, replayDelivery };

export const hooks: PluginModule['hooks'] = { Company: companyHooks, Role: roleHooks, User: userHooks, Webhook: webhookHooks };

export const subscribers: PluginModule['subscribers'] = { webhooks: webhookSubscriber };

export const jobs: PluginModule['jobs'] = { 'deliver-webhook': deliverWebhook };

export const pages: PluginModule['pages'] = { '/dashboard': dashboardPage };

// the console pages' texts beyond the manifest's labels, translatable per tenant
export const texts: PluginModule['texts'] = new URL('./texts.en.json', import.meta.url);
