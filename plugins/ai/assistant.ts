// POST /api/ai/assistant/parse: a sentence → a task proposal (nothing is
// written). POST /api/ai/assistant/confirm: the proposal, as the caller
// accepted or edited it → a project-module task, created through
// ctx.data('Task') so every PM rule and grant applies (no project: the
// caller's personal task). PM's Task has a due date, no time: a proposal's
// time goes into the description ("Due at 15:00 (Europe/Berlin)"), and the
// answer says so in `dueTimeKept`.
import type { FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { handler, Type, validationError, type ModuleContext } from '../../core/plugin-api.ts';
import { MAX_TEXT } from './parse.ts';
import { DATE_LANGUAGES, dateLanguage, type DateLanguage } from './parse-dates.ts';
import { propose } from './parse-proposal.ts';
import { PRIORITIES } from './parse-priority.ts';
import { ParseResult } from './assistant-schemas.ts';

const DESCRIPTION_MAX = 20_000;
const Id = Type.String({ format: 'uuid' });
const Day = Type.String({ format: 'date', description: 'YYYY-MM-DD' });
const Time = Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$', description: 'HH:MM, 24 h' });
const Zone = Type.String({ minLength: 1, maxLength: 64, description: "IANA time zone; default: the tenant's", examples: ['Europe/Berlin'] });

/** An IANA zone the runtime knows, or a 400 naming `path`. */
function checkZone(zone: string | undefined, path: string, fallback: string): string {
  if (zone === undefined) return fallback;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return zone;
  } catch {
    throw validationError([{ path, message: 'is no IANA time zone (e.g. Europe/Berlin)' }]);
  }
}

/** The request's language for dates: the body's, else the first of Accept-Language chrono speaks, else English. */
function languageOf(request: FastifyRequest, given: string | undefined): DateLanguage {
  if (given) return given as DateLanguage;
  const header = request.headers['accept-language'];
  const tags = (typeof header === 'string' ? header : '')
    .split(',')
    .slice(0, 20)
    .map((part) => part.split(';')[0].trim())
    .filter(Boolean);
  return dateLanguage(tags);
}

export const parseAssistantText = handler(
  {
    body: Type.Object(
      {
        text: Type.String({ minLength: 1, maxLength: MAX_TEXT, pattern: '\\S', description: `the sentence, at most ${MAX_TEXT} characters` }),
        language: Type.Optional(
          Type.Union(
            DATE_LANGUAGES.map((l) => Type.Literal(l)),
            { description: 'language of the dates in the text; default: Accept-Language, else en' },
          ),
        ),
        timeZone: Type.Optional(Zone),
        now: Type.Optional(Type.String({ format: 'date-time', description: 'the reference time relative dates count from (default: now), for repeatable answers' })),
        useProvider: Type.Optional(Type.Boolean({ description: "ask the tenant's provider when one is enabled (default true); false: the offline parser only" })),
      },
      { additionalProperties: false },
    ),
    response: { 200: ParseResult },
  },
  async (ctx, request) => {
    const { text, timeZone, now, useProvider } = request.body;
    const reference = now === undefined ? ctx.now() : new Date(now);
    // dates counted from it stay four-digit years PostgreSQL takes
    if (Number.isNaN(reference.getTime()) || reference.getUTCFullYear() < 1900 || reference.getUTCFullYear() > 8999)
      throw validationError([{ path: '/now', message: 'must be a date-time between the years 1900 and 8999' }]);
    return propose(ctx, {
      text,
      language: languageOf(request, request.body.language),
      timeZone: checkZone(timeZone, '/timeZone', ctx.timeZone),
      reference,
      useProvider: useProvider !== false,
    });
  },
);

const ConfirmBody = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 500, pattern: '\\S' }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: DESCRIPTION_MAX }), Type.Null()])),
    dueDate: Type.Optional(Type.Union([Day, Type.Null()])),
    dueTime: Type.Optional(Type.Union([Time, Type.Null()], { description: 'kept in the description: the task has a due date only' })),
    timeZone: Type.Optional(Zone),
    priority: Type.Optional(Type.Union(PRIORITIES.map((p) => Type.Literal(p)))),
    assigneeId: Type.Optional(Type.Union([Id, Type.Null()])),
    projectId: Type.Optional(Type.Union([Id, Type.Null()], { description: 'none: a personal task of the caller' })),
  },
  { additionalProperties: false },
);

/** The description the task gets: the caller's, and the due time when there is one. */
function describe(ctx: ModuleContext, body: Static<typeof ConfirmBody>): string | null {
  const zone = checkZone(body.timeZone, '/timeZone', ctx.timeZone);
  if (body.dueTime && !body.dueDate) throw validationError([{ path: '/dueTime', message: 'needs a dueDate' }]);
  const note = body.dueTime ? `Due at ${body.dueTime} (${zone})` : null;
  const text = [body.description?.trim() || null, note].filter(Boolean).join('\n\n');
  return text || null;
}

export const createAssistantTask = handler(
  {
    body: ConfirmBody,
    response: {
      201: Type.Object(
        {
          task: Type.Ref('PmTask'),
          dueTimeKept: Type.Union([Type.Literal('description'), Type.Null()], { description: "where the due time went: PM's Task holds a date only" }),
        },
        { additionalProperties: false, description: 'The task created; Location names it', headers: ['Location'] } as Record<string, unknown>,
      ),
    },
  },
  async (ctx, request, reply) => {
    const body = request.body;
    const description = describe(ctx, body);
    const tasks = ctx.data('Task');
    const row = await tasks.create({
      title: body.title.trim(),
      description,
      dueDate: body.dueDate ?? null,
      priority: body.priority ?? 'normal',
      assigneeId: body.assigneeId ?? null,
      projectId: body.projectId ?? null,
    });
    reply.code(201).header('location', `/api/pm/tasks/${row.id}`);
    return { task: tasks.toDto(row), dueTimeKept: body.dueTime ? 'description' : null };
  },
);
