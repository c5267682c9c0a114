// GET /api/ai/assistant/help?page=/pm/tasks: what the caller can ask on the
// page they are on. The page is one of the menu entries of the loaded modules
// the caller sees (ctx.menu()); the grammar lists only what the caller can use
// (assignees need the user directory, projects need readable projects, nothing
// without the right to create tasks); examples use a project of the page (a
// project id in its path) or one the caller reads, and date phrases of the
// caller's language. Texts carry a key and English text (the kernel has no
// message catalogue yet): a console can translate by key.
import { handler, Type, type MenuEntry, type ModuleContext } from '../../core/plugin-api.ts';
import { DATE_LANGUAGES, dateLanguage, type DateLanguage } from './parse-dates.ts';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** A date phrase chrono reads in each language (the help's examples stay parseable). */
const DATE_PHRASE: Record<DateLanguage, string> = {
  en: 'tomorrow at 3pm',
  de: 'morgen um 15 Uhr',
  fr: 'demain à 15h',
  es: 'mañana a las 3pm',
  pt: 'amanhã',
  nl: 'morgen om 15:00',
  it: 'domani alle 15',
  ja: '明日15時',
  ru: 'завтра',
  sv: 'imorgon',
  zh: '明天',
  uk: 'завтра',
  fi: 'huomenna',
};

const Text = Type.Object({ key: Type.String({ description: 'translation key' }), text: Type.String({ description: 'English default' }) }, { additionalProperties: false });
const Page = Type.Object({ path: Type.String(), label: Type.String(), module: Type.String(), current: Type.Boolean({ description: 'the page the help is for' }) }, { additionalProperties: false });
const Topic = Type.Object(
  { kind: Type.String({ description: 'title, date, priority, assignee or project' }), key: Type.String(), text: Type.String(), examples: Type.Array(Type.String()) },
  { additionalProperties: false },
);

const text = (key: string, en: string) => ({ key: `ai.assistant.help.${key}`, text: en });

/** The visible menu entry `page` is (the longest path that is it or a prefix of it), or null. */
function entryOf(menu: MenuEntry[], page: string | undefined): MenuEntry | null {
  if (!page) return null;
  const fits = menu.filter((e) => page === e.path || page.startsWith(`${e.path}/`));
  return fits.sort((a, b) => b.path.length - a.path.length)[0] ?? null;
}

/** The project the page shows (an id in its path), else the first the caller reads by name: its key for the examples. */
async function exampleProject(ctx: ModuleContext, page: string | undefined): Promise<string | null> {
  if (!ctx.can('read', 'Project')) return null;
  const projects = ctx.data('Project');
  const id = page?.match(UUID)?.[0];
  const [own] = id ? await projects.find({ id }, { limit: 1 }) : [];
  const [first] = own ? [own] : await projects.find({ archived: false }, { limit: 1, orderBy: 'name' });
  return (first?.key as string | undefined) ?? null;
}

function topics(ctx: ModuleContext, language: DateLanguage, key: string | null) {
  const date = DATE_PHRASE[language];
  const out = [
    { kind: 'title', ...text('title', 'Write what is to be done; what the assistant recognises is taken out of the title.'), examples: ['Call Acme about the renewal'] },
    { kind: 'date', ...text('date', 'A due date and time in words, in your language, counted from now in your time zone.'), examples: [date, 'next Friday', 'in 3 days', '2026-12-01'] },
    {
      kind: 'priority',
      ...text('priority', 'Priority words (urgent, asap, critical, low priority, dringend, urgente…), !, !! or !!!, or p1 to p4.'),
      examples: ['urgent', 'low priority', '!!!', 'p2'],
    },
  ];
  if (ctx.can('read', 'User'))
    out.push({
      kind: 'assignee',
      ...text(
        'assignee',
        '@ and a name or e-mail assigns a user; a near miss still matches, several matches offer a choice. A name without @ assigns too when it is exact and tied to the sentence: "remind Maria to", "assign to Maria:", "Maria should", "with Maria", "for Maria".',
      ),
      examples: ['@maria', '@maria.rossi@example.com', 'remind Maria to', 'Maria should'],
    });
  if (key)
    out.push({
      kind: 'project',
      ...text(
        'project',
        '# and a project key or name puts the task in that project; so does its exact name or key after "in" or "for" ("in the Website relaunch", "for WEB"). Without one it is your personal task.',
      ),
      examples: [`#${key}`, `in ${key}`],
    });
  return out;
}

export const getAssistantHelp = handler(
  {
    querystring: Type.Object(
      {
        page: Type.Optional(Type.String({ pattern: '^/', maxLength: 300, description: 'the console path the user is on, e.g. /pm/tasks' })),
        language: Type.Optional(
          Type.Union(
            DATE_LANGUAGES.map((l) => Type.Literal(l)),
            { description: 'language of the date examples; default: Accept-Language, else en' },
          ),
        ),
      },
      { additionalProperties: false },
    ),
    response: {
      200: Type.Object(
        {
          page: Type.Union([Page, Type.Null()], { description: 'the menu entry the page belongs to; null for a page the caller has no menu entry for' }),
          canCreateTasks: Type.Boolean(),
          intro: Text,
          topics: Type.Array(Topic, { description: 'the grammar the parser understands, as far as the caller can use it' }),
          examples: Type.Array(Type.String(), { description: 'sentences to try on this page' }),
          pages: Type.Array(Page, { description: 'the pages the caller can open, from the menus of the loaded modules' }),
        },
        { additionalProperties: false },
      ),
    },
  },
  async (ctx, request) => {
    const { page } = request.query;
    const accept = String(request.headers['accept-language'] ?? '')
      .split(',')
      .map((p) => p.split(';')[0].trim());
    const language = request.query.language ?? dateLanguage(accept);
    const menu = await ctx.menu();
    const current = entryOf(menu, page);
    const canCreateTasks = ctx.can('create', 'Task');
    const key = canCreateTasks ? await exampleProject(ctx, page) : null;
    const date = DATE_PHRASE[language];
    const intro = canCreateTasks
      ? text(
          'intro',
          `Type a task in one sentence${current ? ` on "${current.label}"` : ''}: the assistant proposes its title, due date, priority, assignee and project, and creates it once you confirm.`,
        )
      : text('intro.readOnly', 'You cannot create tasks, so the assistant has nothing to propose here; the pages below are what you can open.');
    const examples = canCreateTasks
      ? [`Call Acme ${date} about the renewal, urgent`, ...(key ? [`Fix the login page ${date} #${key} !!`] : []), 'Prepare the quarterly report next Friday, low priority']
      : [];
    return {
      page: current && { path: current.path, label: current.label, module: current.module, current: true },
      canCreateTasks,
      intro,
      topics: canCreateTasks ? topics(ctx, language, key) : [],
      examples,
      pages: menu.map((e) => ({ path: e.path, label: e.label, module: e.module, current: e === current })),
    };
  },
);
