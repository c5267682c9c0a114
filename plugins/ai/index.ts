// The AI module's code beyond its manifest (manifests/ai.json).
import type { PluginModule } from '../../core/plugin-api.ts';
import { createAssistantTask, parseAssistantText } from './assistant.ts';
import { listAssistantSuggestions } from './assistant-suggest.ts';
import { getAssistantHelp } from './assistant-help.ts';
import { providerHooks } from './provider.ts';
import { checkAiProvider } from './provider-test.ts';

export const handlers: PluginModule['handlers'] = {
  parseAssistantText,
  createAssistantTask,
  listAssistantSuggestions,
  getAssistantHelp,
  checkAiProvider,
};

export const hooks: PluginModule['hooks'] = {
  AiProvider: providerHooks,
};
