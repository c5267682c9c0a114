// POST /api/ai/assistant/parse: a sentence → a task proposal (nothing is
// written). POST /api/ai/assistant/confirm: the proposal, as the caller
// accepted or edited it → a project-module task, created through
// ctx.data('Task') so every PM rule and grant applies (no project: the
// caller's personal task). PM's Task has a due date, no time: a proposal's
// time goes into the description ("Due at 15:00 (Europe/Berlin)"), and the
// answer says so in `dueTimeKept`.
import type { FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { handler, Type, validationError } from '../../core/plugin-api.ts';
import { MAX_TEXT } from './parse.ts';
import { DATE_LANGUAGES, dateLanguage, localDay, type DateLanguage } from './parse-dates.ts';
import { propose } from './parse-proposal.ts';
import { ConfirmBody, ParseResult, Zone } from './assistant-schemas.ts';

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

/**
 * The due date and time: dueDate and dueTime as given (an edited proposal need
 * not recompute dueAt); without a dueDate, dueAt's day and time in the zone.
 */
function due(body: Static<typeof ConfirmBody>, zone: string): { date: string | null; time: string | null } {
  if (body.dueDate === undefined && body.dueAt) {
    const at = new Date(body.dueAt);
    if (Number.isNaN(at.getTime()) || at.getUTCFullYear() < 1900 || at.getUTCFullYear() > 8999)
      throw validationError([{ path: '/dueAt', message: 'must be a date-time between the years 1900 and 8999' }]);
    return localDay(at, zone);
  }
  if (body.dueTime && !body.dueDate) throw validationError([{ path: '/dueTime', message: 'needs a dueDate' }]);
  return { date: body.dueDate ?? null, time: body.dueTime ?? null };
}

/** The description the task gets: the caller's, and the due time when there is one. */
function describe(body: Static<typeof ConfirmBody>, time: string | null, zone: string): string | null {
  const note = time ? `Due at ${time} (${zone})` : null;
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
    const zone = checkZone(body.timeZone, '/timeZone', ctx.timeZone);
    const { date, time } = due(body, zone);
    const tasks = ctx.data('Task');
    const row = await tasks.create({
      title: body.title.trim(),
      description: describe(body, time, zone),
      dueDate: date,
      priority: body.priority ?? 'normal',
      assigneeId: body.assigneeId ?? null,
      projectId: body.projectId ?? null,
    });
    reply.code(201).header('location', `/api/pm/tasks/${row.id}`);
    return { task: tasks.toDto(row), dueTimeKept: time ? 'description' : null };
  },
);
