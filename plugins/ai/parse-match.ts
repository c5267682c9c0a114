// @names and #projects resolved to the users and projects the caller may read
// (ctx.data: the project module's grants decide), by exact match first (an
// e-mail, its local part, a full or first name; a project key or name), then
// fuzzily (fuse.js). Reads are bounded: a substring search of at most
// CANDIDATES rows, and only when that finds nothing (a typo) a scan of at most
// SCAN rows by name. Names in free text (parse-names.ts) take exact matches
// only, among at most NAMED rows a term's search finds.
import Fuse from 'fuse.js';
import type { ModuleContext, Row } from '../../core/plugin-api.ts';

const CANDIDATES = 25;
const NAMED = 100;
const SCAN = 500;
/** a fuzzy winner must beat the runner-up by this much (fuse scores: 0 perfect, 1 nothing alike) */
const CLEAR_LEAD = 0.15;
const ALTERNATIVES = 5;

export interface Ranked<T> {
  item: T;
  score: number;
  /** matched [start, end) ranges by field */
  matches: { field: string; ranges: [number, number][] }[];
}

export interface UserRef {
  id: string;
  name: string;
  email: string;
}
export interface ProjectRef {
  id: string;
  key: string;
  name: string;
}

export type Resolution<T> = { status: 'matched'; match: T; alternatives: T[] } | { status: 'ambiguous'; match: null; alternatives: T[] } | { status: 'unknown'; match: null; alternatives: T[] };

/** Lower case, without accents, separators as spaces: "Jörg_Müller" and "jorg muller" compare equal. */
export const fold = (s: string) =>
  s
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[._-]+/g, ' ')
    .trim();

/** Candidates ranked by fuse over `keys`, best first, with the ranges that matched. */
export function rank<T extends object>(items: T[], query: string, keys: string[], limit = 10): Ranked<T>[] {
  if (!query.trim()) return [];
  const fuse = new Fuse(items, { keys, includeScore: true, includeMatches: true, ignoreLocation: true, ignoreDiacritics: true, threshold: 0.4, minMatchCharLength: 1 });
  return fuse.search(query, { limit }).map((r) => ({
    item: r.item,
    score: Math.round((r.score ?? 0) * 1000) / 1000,
    matches: (r.matches ?? []).map((m) => ({ field: m.key ?? '', ranges: m.indices.map(([a, b]) => [a, b + 1] as [number, number]) })),
  }));
}

/** One winner if exact matches or fuzzy scores single one out; else the choices. */
function decide<T extends { id: string }>(exact: T[], ranked: Ranked<T>[]): Resolution<T> {
  if (exact.length === 1) return { status: 'matched', match: exact[0], alternatives: [] };
  if (exact.length > 1) return { status: 'ambiguous', match: null, alternatives: exact.slice(0, ALTERNATIVES) };
  if (!ranked.length) return { status: 'unknown', match: null, alternatives: [] };
  const [best, second] = ranked;
  if (!second || second.score - best.score >= CLEAR_LEAD) return { status: 'matched', match: best.item, alternatives: [] };
  return { status: 'ambiguous', match: null, alternatives: ranked.slice(0, ALTERNATIVES).map((r) => r.item) };
}

const userRef = (r: Row): UserRef => ({ id: r.id as string, name: (r.name as string | null) ?? '', email: (r.email as string | null) ?? '' });
const projectRef = (r: Row): ProjectRef => ({ id: r.id as string, key: r.key as string, name: r.name as string });

/** Active users the caller may read whose name or e-mail contains one of `terms`, else (a typo) the first SCAN by name. */
export async function userCandidates(ctx: ModuleContext, terms: string[]): Promise<UserRef[]> {
  if (!ctx.can('read', 'User')) return [];
  const users = ctx.data('User');
  const seen = new Map<string, Row>();
  for (const search of new Set(terms.filter((s) => s.length > 0))) {
    for (const row of (await users.list({ search, size: CANDIDATES })).items as Row[]) seen.set(row.id as string, row);
  }
  const rows = seen.size ? [...seen.values()] : await users.find({}, { limit: SCAN, orderBy: 'name' });
  return rows.filter((r) => r.isActive !== false).map(userRef);
}

/** Projects (not archived) the caller may read whose key or name contains `term`, else the first SCAN by name. */
export async function projectCandidates(ctx: ModuleContext, term: string): Promise<ProjectRef[]> {
  if (!ctx.can('read', 'Project')) return [];
  const projects = ctx.data('Project');
  const found = term ? ((await projects.list({ search: term, size: CANDIDATES })).items as Row[]) : [];
  const rows = found.length ? found : await projects.find({ archived: false }, { limit: SCAN, orderBy: 'name' });
  return rows.filter((r) => r.archived !== true).map(projectRef);
}

/** What names `u` exactly, folded: the e-mail, its local part, the full and the first name. */
export function userNames(u: UserRef): string[] {
  const name = fold(u.name);
  return [fold(u.email), fold(u.email.split('@')[0]), name, name.split(' ')[0]];
}

/** "@maria", "@maria.rossi", "@maria@example.com" among the caller's readable users. */
export async function resolveUser(ctx: ModuleContext, token: string): Promise<Resolution<UserRef>> {
  const candidates = await userCandidates(ctx, [token, token.split(/[._@+-]/)[0]]);
  return decide(
    candidates.filter((u) => userNames(u).includes(fold(token))),
    rank(candidates, fold(token), ['name', 'email']),
  );
}

/**
 * Active users the caller may read whose name or e-mail contains one of
 * `terms`, and projects (not archived) whose key or name does: at most NAMED
 * of each per term, for names in free text, which must match exactly.
 */
export async function namedCandidates(ctx: ModuleContext, terms: { person: string[]; project: string[] }): Promise<{ users: UserRef[]; projects: ProjectRef[] }> {
  const search = async (entity: string, list: string[]) => {
    if (!list.length || !ctx.can('read', entity)) return [];
    const data = ctx.data(entity);
    const seen = new Map<string, Row>();
    for (const term of new Set(list)) for (const row of (await data.list({ search: term, size: NAMED })).items as Row[]) seen.set(row.id as string, row);
    return [...seen.values()];
  };
  const users = (await search('User', terms.person)).filter((r) => r.isActive !== false).map(userRef);
  const projects = (await search('Project', terms.project)).filter((r) => r.archived !== true).map(projectRef);
  return { users, projects };
}

/** "#WEB" by project key, or a project name ("#website"), among the caller's readable projects. */
export async function resolveProject(ctx: ModuleContext, token: string): Promise<Resolution<ProjectRef>> {
  if (!ctx.can('read', 'Project')) return { status: 'unknown', match: null, alternatives: [] };
  const [byKey] = await ctx.data('Project').find({ key: token.toUpperCase(), archived: false }, { limit: 1 });
  if (byKey) return { status: 'matched', match: projectRef(byKey), alternatives: [] };
  const candidates = await projectCandidates(ctx, token);
  const q = fold(token);
  const exact = candidates.filter((p) => fold(p.name) === q || fold(p.name).replace(/ /g, '') === q.replace(/ /g, ''));
  return decide(exact, rank(candidates, q, ['key', 'name']));
}
