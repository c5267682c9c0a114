// GET /api/ai/assistant/suggest: completions as one types. "@ma" completes
// users, "#we" projects, anything else titles of the caller's recent tasks
// (or `kind` says which). Candidates are what the caller may read, fetched by
// bounded queries (parse-match.ts; at most RECENT recent tasks), then ranked
// by fuse.js, with the ranges of each field that matched.
import { handler, Type, type ModuleContext } from '../../core/plugin-api.ts';
import { projectCandidates, rank, userCandidates, type Ranked } from './parse-match.ts';

const RECENT = 200;
const KINDS = ['user', 'project', 'title'] as const;
type Kind = (typeof KINDS)[number];

const Match = Type.Object(
  { field: Type.String(), ranges: Type.Array(Type.Array(Type.Integer({ minimum: 0 }), { minItems: 2, maxItems: 2 }), { description: '[start, end) in the field' }) },
  { additionalProperties: false },
);
const Suggestion = Type.Object(
  {
    kind: Type.Union(KINDS.map((k) => Type.Literal(k))),
    id: Type.Union([Type.String(), Type.Null()], { description: 'the user or project; null for a title' }),
    label: Type.String({ description: 'what to show' }),
    insert: Type.String({ description: 'what to put in the text: @email, #KEY or the title' }),
    detail: Type.Union([Type.String(), Type.Null()]),
    score: Type.Number({ description: '0 is a perfect match; lower ranks first' }),
    matches: Type.Array(Match),
  },
  { additionalProperties: false },
);

interface Suggestion {
  kind: Kind;
  id: string | null;
  label: string;
  insert: string;
  detail: string | null;
  score: number;
  matches: Ranked<object>['matches'];
}

/** Without a query, the first candidates in their order, unranked. */
const ranked = <T extends object>(items: T[], q: string, keys: string[], limit: number): Ranked<T>[] =>
  q ? rank(items, q, keys, limit) : items.slice(0, limit).map((item) => ({ item, score: 0, matches: [] }));

async function suggest(ctx: ModuleContext, kind: Kind, q: string, limit: number): Promise<Suggestion[]> {
  if (kind === 'user') {
    const users = await userCandidates(ctx, [q]);
    return ranked(users, q, ['name', 'email'], limit).map(({ item: u, score, matches }) => ({ kind, id: u.id, label: u.name || u.email, insert: `@${u.email}`, detail: u.email, score, matches }));
  }
  if (kind === 'project') {
    const projects = await projectCandidates(ctx, q);
    return ranked(projects, q, ['key', 'name'], limit).map(({ item: p, score, matches }) => ({ kind, id: p.id, label: p.name, insert: `#${p.key}`, detail: p.key, score, matches }));
  }
  if (!ctx.userId) return [];
  const recent = await ctx.data('Task').find({ reporterId: ctx.userId }, { limit: RECENT, orderBy: '-createdAt' });
  const titles = [...new Set(recent.map((t) => t.title as string))].map((title) => ({ title }));
  return ranked(titles, q, ['title'], limit).map(({ item, score, matches }) => ({ kind, id: null, label: item.title, insert: item.title, detail: null, score, matches }));
}

export const listAssistantSuggestions = handler(
  {
    querystring: Type.Object(
      {
        q: Type.String({ maxLength: 100, default: '', description: 'what was typed; a leading @ or # picks users or projects' }),
        kind: Type.Optional(
          Type.Union(
            KINDS.map((k) => Type.Literal(k)),
            { description: 'default: from the leading @ or #, else title' },
          ),
        ),
        limit: Type.Integer({ minimum: 1, maximum: 20, default: 8 }),
      },
      { additionalProperties: false },
    ),
    response: {
      200: Type.Object({ items: Type.Array(Suggestion), page: Type.Integer(), size: Type.Integer(), total: Type.Integer() }, { additionalProperties: false, description: 'Candidates, best first' }),
    },
  },
  async (ctx, request) => {
    const { q, limit } = request.query;
    const sigil = q.startsWith('@') ? 'user' : q.startsWith('#') ? 'project' : null;
    const kind = request.query.kind ?? sigil ?? 'title';
    const term = (sigil ? q.slice(1) : q).trim();
    const items = await suggest(ctx, kind, term, limit);
    return { items, page: 1, size: limit, total: items.length };
  },
);
