// POST /api/ai/providers/:id/test: asks the provider to parse a sample
// sentence now and records the outcome on the provider (lastTestAt,
// lastTestOk, lastTestFailure), so an administrator sees a broken key or URL
// before the assistant quietly falls back to the offline parser.
import { handler, Type } from '../../core/plugin-api.ts';
import { askProvider, ProviderFailure } from './provider.ts';
import { localDay } from './parse-dates.ts';

const SAMPLE = 'Call Acme tomorrow at 3pm about the renewal, urgent';

export const checkAiProvider = handler(
  {
    params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
    response: {
      200: Type.Object(
        {
          ok: Type.Boolean(),
          error: Type.Union([Type.String(), Type.Null()], { description: 'why the provider failed; null when it answered a valid proposal' }),
          durationMs: Type.Integer({ minimum: 0 }),
          answer: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], { description: "the provider's proposal for the sample sentence" }),
        },
        { additionalProperties: false },
      ),
    },
  },
  async (ctx, request) => {
    const providers = ctx.data('AiProvider');
    const provider = await providers.reveal(request.params.id, ['apiKey']);
    if (!provider) await providers.read(request.params.id); // the caller's 404
    const now = ctx.now();
    const day = localDay(now, ctx.timeZone);
    const started = performance.now();
    let answer = null;
    let error: string | null = null;
    try {
      answer = await askProvider(ctx, provider!, { text: SAMPLE, language: 'en', timeZone: ctx.timeZone, reference: `${day.date}T${day.time}` });
    } catch (err) {
      if (!(err instanceof ProviderFailure)) throw err;
      error = err.message.slice(0, 500);
    }
    await providers.update(request.params.id, {}, { set: { lastTestAt: now.toISOString(), lastTestOk: error === null, lastTestFailure: error } });
    return { ok: error === null, error, durationMs: Math.round(performance.now() - started), answer };
  },
);
