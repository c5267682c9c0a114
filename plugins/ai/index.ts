// The AI module's code beyond its manifest (manifests/ai.json): what the
// manifest cannot declare. Tasks are the project module's (its grants and
// hooks apply on /api/ai/tasks); this adds their assignment history, reports
// and the dashboard.
import type { PluginModule } from '../../core/plugin-api.ts';
import { assignmentHooks, setTaskAssignee } from './assign.ts';
import { listReportTypes, reportHooks } from './reports.ts';
import { getReportRunComparison, createReportRun } from './report-runs.ts';
import { scheduledReports } from './schedule.ts';
import { getAiDashboard } from './dashboard.ts';

export const handlers: PluginModule['handlers'] = {
  setTaskAssignee,
  listReportTypes,
  createReportRun,
  getReportRunComparison,
  getAiDashboard,
};

export const hooks: PluginModule['hooks'] = {
  Task: assignmentHooks,
  AiReport: reportHooks,
};

export const subscribers: PluginModule['subscribers'] = {};

export const jobs: PluginModule['jobs'] = {
  'scheduled-reports': scheduledReports,
};

export const authenticators: PluginModule['authenticators'] = {};
