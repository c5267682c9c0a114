// A sentence → a task proposal: the offline analysis (parse.ts) marks what it
// recognises in the text; the tenant's provider, when enabled, may then
// propose the fields instead (any failure: the offline fields, with a
// warning); @names and #projects, and names in free text (parse-names.ts),
// are resolved among what the caller may read.
import type { ModuleContext } from '../../core/plugin-api.ts';
import { analyse, titleWithout } from './parse.ts';
import { findNames, type NameHit } from './parse-names.ts';
import { instantOf, localDay, type DateLanguage } from './parse-dates.ts';
import { resolveProject, resolveUser, type ProjectRef, type Resolution, type UserRef } from './parse-match.ts';
import { askProvider, enabledProvider, ProviderFailure } from './provider.ts';
import type { Priority } from './parse-priority.ts';
import { TITLE_MAX } from './assistant-schemas.ts';

export interface Span {
  start: number;
  end: number;
  kind: 'date' | 'priority' | 'assignee' | 'project';
  text: string;
  value: unknown;
}

export interface Warning {
  code: string;
  message: string;
  start?: number;
  end?: number;
}

export interface Proposal {
  text: string;
  language: DateLanguage;
  timeZone: string;
  reference: string;
  source: 'offline' | 'provider';
  proposal: {
    title: string;
    dueDate: string | null;
    dueTime: string | null;
    dueAt: string | null;
    timeZone: string;
    priority: Priority;
    assigneeId: string | null;
    projectId: string | null;
  };
  spans: Span[];
  alternatives: { assignee: UserRef[]; project: ProjectRef[] };
  warnings: Warning[];
}

export interface ProposeInput {
  text: string;
  language: DateLanguage;
  timeZone: string;
  reference: Date;
  useProvider: boolean;
}

const at = (f: { start: number; end: number }) => ({ start: f.start, end: f.end });

export async function propose(ctx: ModuleContext, input: ProposeInput): Promise<Proposal> {
  const { text, language, timeZone, reference } = input;
  const warnings: Warning[] = [];
  const a = analyse(text, language, reference, timeZone);
  const fields = { title: a.title, dueDate: a.dates[0]?.date ?? null, dueTime: a.dates[0]?.time ?? null, priority: a.priority };
  let assigneeName: string | null = a.mentions[0]?.text ?? null;
  let projectName: string | null = a.tags[0]?.text ?? null;
  let source: Proposal['source'] = 'offline';
  const now = localDay(reference, timeZone);

  const provider = input.useProvider ? await enabledProvider(ctx) : null;
  if (provider) {
    try {
      const answer = await askProvider(ctx, provider, { text, language, timeZone, reference: `${now.date}T${now.time}` });
      Object.assign(fields, { title: answer.title, dueDate: answer.dueDate, dueTime: answer.dueDate ? answer.dueTime : null, priority: answer.priority });
      assigneeName = answer.assignee?.replace(/^@/, '') || null;
      projectName = answer.project?.replace(/^#/, '') || null;
      source = 'provider';
    } catch (err) {
      if (!(err instanceof ProviderFailure)) throw err;
      warnings.push({ code: 'PROVIDER_FAILED', message: `${err.message}; the offline parser answered` });
    }
  }

  const spans: Span[] = [
    ...a.dates.slice(0, 1).map((d) => ({ ...at(d), kind: 'date' as const, text: d.text, value: { date: d.date, time: d.time } })),
    ...a.priorities.map((p) => ({ ...at(p), kind: 'priority' as const, text: p.text, value: p.value })),
  ];
  for (const extra of a.dates.slice(1)) warnings.push({ code: 'SEVERAL_DATES', message: `only the first date is the due date; "${extra.text}" stays in the title`, ...at(extra) });

  // names without @ or #, in the offline reading only: a provider's answer names its own
  const named = source === 'offline' ? await findNames(ctx, text, a.sites) : { people: [], projects: [] };
  const cut = [...a.cut];
  const free = <T>(hits: NameHit<T>[], explicit: boolean, kind: 'assignee' | 'project'): Resolution<T> | null => {
    const [what, several, ambiguous] = kind === 'assignee' ? ['users', 'SEVERAL_USERS', 'AMBIGUOUS_USER'] : ['projects', 'SEVERAL_PROJECTS', 'AMBIGUOUS_PROJECT'];
    const chosen = explicit ? undefined : hits[0];
    for (const extra of explicit ? hits : hits.slice(1)) warnings.push({ code: several, message: `a task has one ${kind}; "${extra.text}" stays in the title`, ...at(extra) });
    if (!chosen) return null;
    cut.push({ start: chosen.cutStart, end: chosen.cutEnd });
    spans.push({ ...at(chosen), kind, text: chosen.text, value: chosen.resolution.match });
    if (chosen.resolution.status === 'ambiguous') warnings.push({ code: ambiguous, message: `"${chosen.text}" matches several ${what}: pick one of the alternatives`, ...at(chosen) });
    return chosen.resolution;
  };

  let assignee: Resolution<UserRef> | null = assigneeName ? await resolveUser(ctx, assigneeName) : null;
  const mention = a.mentions.find((m) => m.text === assigneeName) ?? a.mentions[0];
  if (mention) spans.push({ ...at(mention), kind: 'assignee', text: text.slice(mention.start, mention.end), value: assignee?.match ?? null });
  if (assignee?.status === 'unknown') warnings.push({ code: 'UNKNOWN_USER', message: `no user you can see matches @${assigneeName}`, ...(mention ? at(mention) : {}) });
  if (assignee?.status === 'ambiguous') warnings.push({ code: 'AMBIGUOUS_USER', message: `@${assigneeName} matches several users: pick one of the alternatives`, ...(mention ? at(mention) : {}) });
  for (const extra of a.mentions.slice(1)) warnings.push({ code: 'SEVERAL_USERS', message: `a task has one assignee; @${extra.text} was left out`, ...at(extra) });
  assignee = free(named.people, assignee !== null, 'assignee') ?? assignee;

  let project: Resolution<ProjectRef> | null = projectName ? await resolveProject(ctx, projectName) : null;
  const tag = a.tags.find((t) => t.text === projectName) ?? a.tags[0];
  if (tag) spans.push({ ...at(tag), kind: 'project', text: text.slice(tag.start, tag.end), value: project?.match ?? null });
  if (project?.status === 'unknown') warnings.push({ code: 'UNKNOWN_PROJECT', message: `no project you can see matches #${projectName}`, ...(tag ? at(tag) : {}) });
  if (project?.status === 'ambiguous') warnings.push({ code: 'AMBIGUOUS_PROJECT', message: `#${projectName} matches several projects: pick one of the alternatives`, ...(tag ? at(tag) : {}) });
  for (const extra of a.tags.slice(1)) warnings.push({ code: 'SEVERAL_PROJECTS', message: `a task belongs to one project; #${extra.text} was left out`, ...at(extra) });
  project = free(named.projects, project !== null, 'project') ?? project;
  if (source === 'offline') fields.title = titleWithout(text, cut);

  if (fields.dueDate && (fields.dueDate < now.date || (fields.dueDate === now.date && fields.dueTime !== null && fields.dueTime < now.time)))
    warnings.push({ code: 'DATE_IN_PAST', message: `the due date ${fields.dueDate}${fields.dueTime ? ` ${fields.dueTime}` : ''} has passed` });
  let title = fields.title;
  if (!title) warnings.push({ code: 'EMPTY_TITLE', message: 'nothing is left of the text for a title: give one before confirming' });
  if (title.length > TITLE_MAX) {
    title = title.slice(0, TITLE_MAX);
    warnings.push({ code: 'TITLE_TRUNCATED', message: `the title was cut to ${TITLE_MAX} characters` });
  }

  return {
    text,
    language,
    timeZone,
    reference: reference.toISOString(),
    source,
    proposal: {
      title,
      dueDate: fields.dueDate,
      dueTime: fields.dueTime,
      dueAt: fields.dueDate && fields.dueTime ? instantOf(fields.dueDate, fields.dueTime, timeZone).toISOString() : null,
      timeZone,
      priority: fields.priority,
      assigneeId: assignee?.match?.id ?? null,
      projectId: project?.match?.id ?? null,
    },
    spans: spans.sort((x, y) => x.start - y.start),
    alternatives: { assignee: assignee?.alternatives ?? [], project: project?.alternatives ?? [] },
    warnings,
  };
}
