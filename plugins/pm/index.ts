// The project-management module's code beyond its manifest: the reports and
// the dashboard (reports.ts), counted in SQL inside the caller's read scope.
import type { PluginModule } from '../../core/plugin-api.ts';
import { getDashboard, getProgressReport, getTaskDistribution, getWorkload } from './reports.ts';

export const handlers: PluginModule['handlers'] = { getProgressReport, getTaskDistribution, getWorkload, getDashboard };
