// The CRM module's code beyond its manifest: lead conversion, the one
// operation that writes several entities at once, and the rule that an
// activity is linked to something. Everything else (routes,
// state flows, quote totals, the activity log) is declared in manifests/crm.json.
import type { PluginModule } from '../../core/plugin-api.ts';
import { convertLead } from './convert-lead.ts';
import { activityHooks } from './hooks.ts';
import { dashboardPage } from './pages/dashboard.ts';

export const handlers: PluginModule['handlers'] = { convertLead };

export const hooks: PluginModule['hooks'] = { Activity: activityHooks };

export const pages: PluginModule['pages'] = { '/crm/dashboard': dashboardPage };

// the console pages' texts beyond the manifest's labels, translatable per tenant
export const texts: PluginModule['texts'] = new URL('./texts.en.json', import.meta.url);
