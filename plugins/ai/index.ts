// The AI module's code beyond its manifest (manifests/ai.json): what the
// manifest cannot declare. Tasks are the project module's (its grants and
// hooks apply on /api/ai/tasks); this adds their assignment history, reports,
// the dashboard, the assistant and API-key clients with their jobs.
import type { PluginModule } from '../../core/plugin-api.ts';
import { createClient, getClient, listClientJobs, listClients, queueClientJob, revokeClient, rotateClientKey, updateClient } from './clients.ts';
import { apiKeyAuthenticator, clientTokenAuthenticator, issueClientToken } from './client-auth.ts';
import { claimJob, completeJob, failJob, heartbeatJob, listOwnJobs } from './client-jobs.ts';
import { presenceSweep } from './presence.ts';
import { createAssistantTask, parseAssistantText } from './assistant.ts';
import { listAssistantSuggestions } from './assistant-suggest.ts';
import { getAssistantHelp } from './assistant-help.ts';
import { providerHooks } from './provider.ts';
import { checkAiProvider } from './provider-test.ts';
import { assignmentHooks, setTaskAssignee } from './assign.ts';
import { listReportTypes, reportHooks } from './reports.ts';
import { getReportRunComparison, createReportRun } from './report-runs.ts';
import { archiveReport, deleteReport, unarchiveReport } from './report-archive.ts';
import { scheduledReports } from './schedule.ts';
import { getAiDashboard } from './dashboard.ts';
import { aiDashboardPage } from './dashboard-page.ts';
import { assistantPage } from './assistant-page.ts';
import { oneReportHistoryPage, reportHistoryPage } from './report-history-page.ts';
import { reportRunPage } from './report-run-page.ts';
import { runReportPage } from './run-report-page.ts';
import { reportDeletePage } from './report-delete-page.ts';
import { reportArchivePage } from './report-archive-page.ts';
// registered on import: the client-activity report type and the clients and jobs dashboard sections
import './client-activity.ts';
import './client-dashboard.ts';

export const handlers: PluginModule['handlers'] = {
  // API-key clients (clients.ts, client-auth.ts, client-jobs.ts)
  listClients,
  createClient,
  getClient,
  updateClient,
  rotateClientKey,
  revokeClient,
  queueClientJob,
  listClientJobs,
  issueClientToken,
  listOwnJobs,
  claimJob,
  heartbeatJob,
  completeJob,
  failJob,
  // the assistant (assistant*.ts, provider*.ts)
  parseAssistantText,
  createAssistantTask,
  listAssistantSuggestions,
  getAssistantHelp,
  checkAiProvider,
  // tasks, reports, the dashboard (assign.ts, report*.ts, dashboard.ts)
  setTaskAssignee,
  listReportTypes,
  createReportRun,
  getReportRunComparison,
  deleteReport,
  archiveReport,
  unarchiveReport,
  getAiDashboard,
};

export const hooks: PluginModule['hooks'] = {
  AiProvider: providerHooks,
  Task: assignmentHooks,
  AiReport: reportHooks,
};

export const subscribers: PluginModule['subscribers'] = {};

export const jobs: PluginModule['jobs'] = {
  'presence-sweep': presenceSweep,
  'scheduled-reports': scheduledReports,
};

export const authenticators: PluginModule['authenticators'] = {
  'ai-api-key': apiKeyAuthenticator,
  'ai-client': clientTokenAuthenticator,
};

// console pages (views/, assets/); tasks, clients and reports use the generic entity pages
export const pages: PluginModule['pages'] = {
  '/ai/dashboard': aiDashboardPage,
  '/ai/assistant': assistantPage,
  '/ai/reports/history': reportHistoryPage,
  '/ai/reports/history/:id': reportRunPage,
  '/ai/reports/:id/run': runReportPage,
  '/ai/reports/:id/history': oneReportHistoryPage,
  // in place of the generic confirmation: it names the runs that go with the report
  '/ai/reports/:id/delete': reportDeletePage,
  '/ai/reports/:id/archive': reportArchivePage,
};

// the words of those pages and their scripts, which tenants translate (key → English)
export const texts: PluginModule['texts'] = new URL('./texts.en.json', import.meta.url);
