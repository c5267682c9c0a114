// The tenant's OpenAI-compatible provider (AiProvider): asked through the
// kernel's outbound HTTP (its SSRF policy, timeout and answer cap) with a
// strict JSON-schema answer format; its answer is checked against that schema
// before anything of it is used. Any failure is a ProviderFailure, which the
// assistant turns into a fallback to the offline parser.
import { Type, validationError, type EntityHooks, type ModuleContext, type Row } from '../../core/plugin-api.ts';
import { Value } from 'typebox/value';
import { PRIORITIES } from './parse-priority.ts';

export class ProviderFailure extends Error {}

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

/** What the model must answer: the same fields as the offline parser, names as written in the text. */
const ProviderAnswer = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 500 }),
    dueDate: Nullable(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' })),
    dueTime: Nullable(Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$' })),
    priority: Type.Union(PRIORITIES.map((p) => Type.Literal(p))),
    assignee: Nullable(Type.String({ maxLength: 200 })),
    project: Nullable(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ProviderAnswer = {
  title: string;
  dueDate: string | null;
  dueTime: string | null;
  priority: (typeof PRIORITIES)[number];
  assignee: string | null;
  project: string | null;
};

const INSTRUCTIONS = [
  'You turn one sentence into a task proposal. Answer with JSON only, fitting the given schema.',
  'title: the task itself, without the date, priority, @person and #project parts.',
  'dueDate (YYYY-MM-DD) and dueTime (HH:MM, 24 h): in the given time zone, relative to the given reference time; null when the sentence names none.',
  'priority: low, normal, high or critical (urgent, asap: high); normal when nothing says otherwise.',
  'assignee: the person after @ (or named as the one to do it) as written, else null. project: the project after # as written, else null.',
].join('\n');

export interface ProviderInput {
  text: string;
  language: string;
  timeZone: string;
  /** the wall-clock reference in the time zone, YYYY-MM-DDTHH:MM */
  reference: string;
}

const isRealDate = (d: string) => {
  const at = new Date(`${d}T00:00:00Z`);
  return !Number.isNaN(at.getTime()) && at.toISOString().startsWith(d);
};

/**
 * The tenant's enabled provider (of several, the first by name) with its key,
 * or null. Read as the system: configuration the caller uses, never shown to them.
 */
export async function enabledProvider(ctx: ModuleContext): Promise<Row | null> {
  const providers = ctx.system().data('AiProvider');
  const [row] = await providers.find({ enabled: true }, { limit: 1, orderBy: 'name' });
  return row ? providers.reveal(row.id as string, ['apiKey']) : null;
}

/** One question to the provider; throws ProviderFailure on a refused address, timeout, HTTP error or an answer off the schema. */
export async function askProvider(ctx: ModuleContext, provider: Row, input: ProviderInput): Promise<ProviderAnswer> {
  const url = `${String(provider.baseUrl).replace(/\/+$/, '')}/chat/completions`;
  const body = JSON.stringify({
    model: provider.model,
    temperature: 0,
    messages: [
      { role: 'system', content: INSTRUCTIONS },
      { role: 'user', content: JSON.stringify(input) },
    ],
    response_format: { type: 'json_schema', json_schema: { name: 'task_proposal', strict: true, schema: ProviderAnswer } },
  });
  const headers: Record<string, string> = { 'user-agent': 'Plinth-Assistant/1', ...(provider.apiKey ? { authorization: `Bearer ${provider.apiKey}` } : {}) };
  let res;
  try {
    res = await ctx.http.postJson(url, body, headers, { timeoutMs: Number(provider.timeoutMs ?? 8000) });
  } catch (err) {
    throw new ProviderFailure(`the provider could not be reached: ${(err as Error).message}`);
  }
  if (res.status < 200 || res.status > 299) throw new ProviderFailure(`the provider answered HTTP ${res.status}`);
  if (res.truncated) throw new ProviderFailure('the provider answered more than the outbound limit allows');
  let content: unknown;
  try {
    content = JSON.parse(JSON.parse(res.body)?.choices?.[0]?.message?.content);
  } catch {
    throw new ProviderFailure('the provider did not answer a chat completion holding JSON');
  }
  if (!Value.Check(ProviderAnswer, content)) throw new ProviderFailure('the provider answered JSON that does not fit the task proposal schema');
  const answer = content as ProviderAnswer;
  if (answer.dueDate && !isRealDate(answer.dueDate)) throw new ProviderFailure(`the provider answered a date that does not exist: ${answer.dueDate}`);
  return answer;
}

/** Writes of AiProvider: the URL must be one the kernel would call. */
export const providerHooks: EntityHooks = {
  async beforeWrite(ctx, { op, input }) {
    if (op === 'delete' || !input || typeof input.baseUrl !== 'string') return;
    const reason = ctx.http.checkUrl(input.baseUrl);
    if (reason) throw validationError([{ path: '/baseUrl', message: reason }]);
  },
};
