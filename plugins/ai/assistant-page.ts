// The AI assistant (/ai/assistant): a sentence in plain language becomes a
// task proposal (POST /api/ai/assistant/parse) that the user reviews, edits
// and confirms (POST /api/ai/assistant/confirm) or cancels; completions of
// @people, #projects and recent titles come as they type (GET
// /api/ai/assistant/suggest). The page's script does those calls; this reads
// the help (GET /api/ai/assistant/help): what the user can ask, with examples.
import { required, type ConsolePage } from '../../core/plugin-api.ts';
import { labelOf } from './page-support.ts';

const PATH = '/ai/assistant';

interface Help {
  canCreateTasks: boolean;
  intro: { text: string };
  topics: { kind: string; text: string; examples: string[] }[];
  examples: string[];
}

const TOPIC_LABELS: Record<string, string> = { title: 'Title', date: 'Due date and time', priority: 'Priority', assignee: 'Assignee', project: 'Project' };

export const assistantPage: ConsolePage = {
  view: new URL('./views/assistant.hbs', import.meta.url),
  title: 'AI assistant',
  async load(api) {
    const { canCreateTasks, intro, topics, examples } = required(await api.get<Help>(`/api/ai/assistant/help?page=${encodeURIComponent(PATH)}`));
    return {
      canCreateTasks,
      intro: intro.text,
      examples,
      topics: topics.map((t) => ({ label: TOPIC_LABELS[t.kind] ?? t.kind, text: t.text, examples: t.examples.join(' · ') })),
      priorities: ['low', 'normal', 'high', 'critical'].map((p) => ({ value: p, label: labelOf(p) })),
    };
  },
};
