// The AI module's code beyond its manifest (manifests/ai.json).
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
};

export const hooks: PluginModule['hooks'] = {
  AiProvider: providerHooks,
};

export const subscribers: PluginModule['subscribers'] = {};

export const jobs: PluginModule['jobs'] = {
  'presence-sweep': presenceSweep,
};

export const authenticators: PluginModule['authenticators'] = {
  'ai-api-key': apiKeyAuthenticator,
  'ai-client': clientTokenAuthenticator,
};
