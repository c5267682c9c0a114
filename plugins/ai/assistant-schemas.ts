// Response schemas of the assistant's routes (OpenAPI documents them from here).
import { Type } from '../../core/plugin-api.ts';
import { DATE_LANGUAGES } from './parse-dates.ts';
import { PRIORITIES } from './parse-priority.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

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
    proposal: Type.Object(
      {
        title: Type.String(),
        dueDate: Nullable(Type.String({ format: 'date' })),
        dueTime: Nullable(Type.String({ description: 'HH:MM in timeZone, when the text names a time' })),
        dueAt: Nullable(Type.String({ format: 'date-time', description: 'dueDate and dueTime as an instant' })),
        priority: Type.Union(PRIORITIES.map((p) => Type.Literal(p))),
        assigneeId: Nullable(Type.String()),
        projectId: Nullable(Type.String()),
      },
      { additionalProperties: false, description: 'what confirm takes (with timeZone), as is or edited' },
    ),
    spans: Type.Array(Span, { description: 'what was recognised, in text order' }),
    alternatives: Type.Object(
      { assignee: Type.Array(UserRef), project: Type.Array(ProjectRef) },
      { additionalProperties: false, description: 'the choices when an @name or #project matched several' },
    ),
    warnings: Type.Array(Warning),
  },
  { additionalProperties: false, description: 'A task proposal; nothing is written' },
);
