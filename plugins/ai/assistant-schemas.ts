// Schemas of the assistant's parse and confirm (OpenAPI documents them from
// here). A proposal's fields are declared once: parse answers them all and
// confirm takes them all, so what parse proposes is always something confirm
// accepts as is.
import type { TOptional, TSchema } from 'typebox';
import { Type } from '../../core/plugin-api.ts';
import { DATE_LANGUAGES } from './parse-dates.ts';
import { PRIORITIES } from './parse-priority.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/** The longest title a task holds. */
export const TITLE_MAX = 500;
const DESCRIPTION_MAX = 20_000;

const Id = Type.String({ format: 'uuid' });
/** An IANA zone name; assistant.ts checks that the runtime knows it. */
export const Zone = Type.String({ minLength: 1, maxLength: 64, description: "IANA time zone; default: the tenant's", examples: ['Europe/Berlin'] });

const proposalFields = {
  title: Type.String({ maxLength: TITLE_MAX }),
  dueDate: Nullable(Type.String({ format: 'date', description: 'YYYY-MM-DD' })),
  dueTime: Nullable(Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$', description: "HH:MM, 24 h, in timeZone; kept in the task's description: the task has a due date only" })),
  dueAt: Nullable(
    Type.String({
      format: 'date-time',
      description: 'dueDate and dueTime as an instant; confirm reads it only without a dueDate (then it gives the date and the time in timeZone)',
    }),
  ),
  timeZone: Zone,
  priority: Type.Union(PRIORITIES.map((p) => Type.Literal(p))),
  assigneeId: Nullable(Id),
  projectId: Nullable(Type.String({ format: 'uuid', description: 'none: a personal task of the caller' })),
};

const optional = <T extends Record<string, TSchema>>(fields: T) => Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(v)])) as { [K in keyof T]: TOptional<T[K]> };

/** Confirm's body: every field of a proposal, as parse answered it or edited; a title and a description of one's own. */
export const ConfirmBody = Type.Object(
  {
    ...optional(proposalFields),
    title: Type.String({ minLength: 1, maxLength: TITLE_MAX, pattern: '\\S' }),
    description: Type.Optional(Nullable(Type.String({ maxLength: DESCRIPTION_MAX }))),
  },
  { additionalProperties: false },
);

const UserRef = Type.Object({ id: Type.String(), name: Type.String(), email: Type.String() }, { additionalProperties: false });
const ProjectRef = Type.Object({ id: Type.String(), key: Type.String(), name: Type.String() }, { additionalProperties: false });

const DateValue = Type.Object({ date: Type.String({ format: 'date' }), time: Nullable(Type.String()) }, { additionalProperties: false });

const Span = Type.Object(
  {
    start: Type.Integer({ minimum: 0, description: 'index of the first character (UTF-16 code units, as JavaScript counts)' }),
    end: Type.Integer({ minimum: 0, description: 'index after the last character' }),
    kind: Type.Union([Type.Literal('date'), Type.Literal('priority'), Type.Literal('assignee'), Type.Literal('project')]),
    text: Type.String(),
    value: Type.Union([DateValue, Type.Union(PRIORITIES.map((p) => Type.Literal(p))), UserRef, ProjectRef, Type.Null()], {
      description: 'date: { date, time }; priority: the level; assignee: the user or null (unknown, ambiguous); project: the project or null',
    }),
  },
  { additionalProperties: false },
);

const Warning = Type.Object(
  {
    code: Type.String({
      description: 'DATE_IN_PAST, SEVERAL_DATES, UNKNOWN_USER, AMBIGUOUS_USER, SEVERAL_USERS, UNKNOWN_PROJECT, AMBIGUOUS_PROJECT, SEVERAL_PROJECTS, EMPTY_TITLE, TITLE_TRUNCATED, PROVIDER_FAILED',
    }),
    message: Type.String(),
    start: Type.Optional(Type.Integer({ minimum: 0 })),
    end: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);

export const ParseResult = Type.Object(
  {
    text: Type.String(),
    language: Type.Union(DATE_LANGUAGES.map((l) => Type.Literal(l))),
    timeZone: Type.String(),
    reference: Type.String({ format: 'date-time', description: 'the instant relative dates were counted from' }),
    source: Type.Union([Type.Literal('offline'), Type.Literal('provider')], { description: "who proposed the fields: the offline parser or the tenant's provider" }),
    proposal: Type.Object(proposalFields, { additionalProperties: false, description: 'the body confirm takes, as is or edited' }),
    spans: Type.Array(Span, { description: 'what was recognised, in text order' }),
    alternatives: Type.Object(
      { assignee: Type.Array(UserRef), project: Type.Array(ProjectRef) },
      { additionalProperties: false, description: 'the choices when an @name, a #project or a name in the text matched several' },
    ),
    warnings: Type.Array(Warning),
  },
  { additionalProperties: false, description: 'A task proposal; nothing is written' },
);
