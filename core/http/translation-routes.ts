// The interface texts of the tenant (interface-texts.ts): the catalog a user
// interface renders from, in the caller's language, and the report of what is
// not yet translated. The Translation rows themselves are generic CRUD under
// /api/translations (the core manifest), changed by whoever holds the grants.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Kernel } from '../kernel.ts';
import type { InterfaceTexts } from './interface-texts.ts';
import { languagePreference } from '../i18n.ts';
import { success } from './headers.ts';

const LANGUAGE = '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$';
const NAMESPACES = '^[a-z][a-z0-9-]*(,[a-z][a-z0-9-]*)*$';

const Catalog = Type.Object(
  {
    languages: Type.Array(Type.String(), { description: 'languages the tenant has texts in, English (built in) included' }),
    texts: Type.Record(Type.String(), Type.Record(Type.String(), Type.String()), { description: 'namespace (a module id, or "console") → key → text' }),
  },
  { $id: 'TranslationCatalog', additionalProperties: false },
);

const Missing = Type.Object(
  {
    language: Type.String(),
    namespaces: Type.Array(
      Type.Object(
        {
          namespace: Type.String(),
          total: Type.Integer({ description: 'keys of the namespace' }),
          translated: Type.Integer({ description: 'keys the tenant has a text for in the language' }),
          missing: Type.Array(Type.Object({ key: Type.String(), text: Type.String({ description: 'the built-in English text' }) }, { additionalProperties: false })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: 'TranslationMissing', additionalProperties: false },
);

export function registerTranslationRoutes(app: FastifyInstance, kernel: Kernel, texts: InterfaceTexts): void {
  for (const s of [Catalog, Missing]) app.addSchema(s);
  const tags = ['Translations'];

  app.get(
    '/api/translations/catalog',
    {
      config: { access: { auth: 'user' } },
      schema: {
        operationId: 'coreGetTranslationCatalog',
        tags,
        summary: "The interface texts in the caller's language: the tenant's, else the built-in ones, else the key",
        description: 'Language: the `language` parameter, else Accept-Language, else the tenant default; each text falls back to English. Every user may read it.',
        security: [{ bearerAuth: [] }],
        querystring: Type.Object(
          {
            language: Type.Optional(Type.String({ pattern: LANGUAGE, maxLength: 35 })),
            namespaces: Type.Optional(Type.String({ pattern: NAMESPACES, maxLength: 400, description: 'comma-separated; default: all' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: success(Type.Ref('TranslationCatalog'), 'The texts by namespace and key', ['Content-Language']) },
      },
    },
    async (request, reply) => {
      const { language, namespaces } = request.query as { language?: string; namespaces?: string };
      const tenant = request.tenant!;
      const prefs = languagePreference(language ?? request.headers['accept-language'], tenant.defaultLanguage ?? kernel.config.defaultLanguage);
      reply.header('content-language', prefs[0]);
      return { languages: await texts.languages(tenant.id), texts: await texts.catalog(tenant.id, prefs, namespaces?.split(',')) };
    },
  );

  app.get(
    '/api/translations/missing',
    {
      config: { access: { auth: 'user', can: { action: 'read', subject: 'Translation' } } },
      schema: {
        operationId: 'coreListMissingTranslations',
        tags,
        summary: 'Per namespace, the keys the tenant has no text for in a language',
        security: [{ bearerAuth: [] }],
        querystring: Type.Object({ language: Type.String({ pattern: LANGUAGE, maxLength: 35 }) }, { additionalProperties: false }),
        response: { 200: success(Type.Ref('TranslationMissing'), 'What is missing, by namespace') },
      },
    },
    async (request) => {
      const { language } = request.query as { language: string };
      return { language, namespaces: await texts.missing(request.tenant!.id, language) };
    },
  );
}
