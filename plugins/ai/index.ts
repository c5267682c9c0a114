// The AI module's code beyond its manifest (manifests/ai.json).
import type { PluginModule } from '../../core/plugin-api.ts';
import { confirmAssistantProposal, parseAssistantText } from './assistant.ts';
import { suggestAssistantCompletions } from './assistant-suggest.ts';
import { getAssistantHelp } from './assistant-help.ts';
import { providerHooks } from './provider.ts';
import { testAiProvider } from './provider-test.ts';

export const handlers: PluginModule['handlers'] = {
  parseAssistantText,
  confirmAssistantProposal,
  suggestAssistantCompletions,
  getAssistantHelp,
  testAiProvider,
};

export const hooks: PluginModule['hooks'] = {
  AiProvider: providerHooks,
};
