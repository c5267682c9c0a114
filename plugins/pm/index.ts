// The project management module's code beyond its manifest (manifests/pm.json):
// what the manifest cannot declare. Membership and project roles are grant
// conditions in the manifest, compiled into every statement by the kernel.
import type { PluginModule } from '../../core/plugin-api.ts';
import { getDashboard, getProgressReport, getTaskDistribution, getWorkload } from './reports.ts';

export const handlers: PluginModule['handlers'] = {
  getProgressReport,
  getTaskDistribution,
  getWorkload,
  getDashboard,
};

export const hooks: PluginModule['hooks'] = {};

export const subscribers: PluginModule['subscribers'] = {};

export const jobs: PluginModule['jobs'] = {};
