// The AI assistant (/ai/assistant): a sentence in plain language becomes a
// task proposal (POST /api/ai/assistant/parse) that the user reviews, edits
// and confirms (POST /api/ai/assistant/confirm) or cancels; completions of
// @people, #projects and recent titles come as they type (GET
// /api/ai/assistant/suggest). The page's script does those calls; this reads
// the help (GET /api/ai/assistant/help): what the user can ask, with examples.
// The help's words are the API's; the page's own words and its scripts' are
// the module's texts (texts.en.json), the scripts' given as #ai-assistant-texts.
import { required, scriptJson, type ConsolePage, type PageApi } from '../../core/plugin-api.ts';
import { valueLabel } from './page-support.ts';

const PATH = '/ai/assistant';

interface Help {
  canCreateTasks: boolean;
  intro: { text: string };
  topics: { kind: string; text: string; examples: string[] }[];
  examples: string[];
}

/** a help topic's kind → its label's key */
const TOPIC_LABELS = new Map([
  ['title', 'assistant.title'],
  ['date', 'assistant.dueDateAndTime'],
  ['priority', 'assistant.priority'],
  ['assignee', 'assistant.assignee'],
  ['project', 'assistant.project'],
]);

/** What assistant.js and assistant-suggest.js show, by the names they read it under; {name}s are theirs to fill. */
const scriptTexts = (api: PageApi) => ({
  nobody: api.text('assistant.nobody'),
  noProject: api.text('assistant.noProject'),
  zone: api.text('assistant.zone'),
  sourceProvider: api.text('assistant.sourceProvider'),
  sourceParser: api.text('assistant.sourceParser'),
  due: api.text('assistant.due'),
  dueAt: api.text('assistant.dueAt'),
  assignedTo: api.text('assistant.assignedTo'),
  severalMatched: api.text('assistant.severalMatched'),
  proposed: api.text('assistant.proposed'),
  writeFirst: api.text('assistant.writeFirst'),
  reading: api.text('assistant.reading'),
  notRead: api.text('assistant.notRead'),
  needsTitle: api.text('assistant.needsTitle'),
  timeNeedsDate: api.text('assistant.timeNeedsDate'),
  notCreated: api.text('assistant.notCreated'),
  created: api.text('assistant.created'),
  createdTimeKept: api.text('assistant.createdTimeKept'),
  cancelled: api.text('assistant.cancelled'),
  requestField: api.text('assistant.requestField'),
  serverAnswered: api.text('common.serverAnswered'),
  unreachable: api.text('common.unreachable'),
  insert: api.text('assistant.insert'),
  suggestedTitles: api.text('assistant.suggestedTitles'),
  suggestedPeople: api.text('assistant.suggestedPeople'),
  suggestedProjects: api.text('assistant.suggestedProjects'),
  kinds: {
    date: api.text('assistant.kind.date'),
    priority: api.text('assistant.kind.priority'),
    assignee: api.text('assistant.kind.assignee'),
    project: api.text('assistant.kind.project'),
  },
});

export const assistantPage: ConsolePage = {
  view: new URL('./views/assistant.hbs', import.meta.url),
  title: 'AI assistant',
  async load(api) {
    const { canCreateTasks, intro, topics, examples } = required(await api.get<Help>(`/api/ai/assistant/help?page=${encodeURIComponent(PATH)}`));
    return {
      canCreateTasks,
      intro: intro.text,
      examples,
      topics: topics.map((t) => {
        const key = TOPIC_LABELS.get(t.kind);
        return { label: key ? api.text(key) : t.kind, text: t.text, examples: t.examples.join(' · ') };
      }),
      priorities: ['low', 'normal', 'high', 'critical'].map((p) => ({ value: p, label: valueLabel(api, p) })),
      texts: scriptJson(scriptTexts(api)),
    };
  },
};
