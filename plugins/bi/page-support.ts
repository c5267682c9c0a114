// What the BI pages share: whether the caller may change an application's
// sheets, widgets, saved queries and data sources, and which sheets they may
// add a widget to, as far as the API tells it (which edit controls a page
// shows: the console never decides access, the API still refuses what it
// must, and the scripts show that refusal), and the texts the pages' scripts
// read.
import { readFileSync } from 'node:fs';
import type { PageApi } from '../../core/plugin-api.ts';
import { scriptJson } from '../../core/plugin-api.ts';

/** A module text in the user's language (PageApi.text), handed to the helpers that build a page's strings. */
export type Text = PageApi['text'];

interface Meta {
  entities: { name: string; actions: string[] }[];
}

/** The caller's user id when the API's model grants them every one of `actions` on `entity` at all; null when it does not. */
async function grantedTo(api: PageApi, entity: string, actions: string[]): Promise<string | null> {
  const [me, meta] = await Promise.all([api.get<{ id: string }>('/api/auth/me'), api.get<Meta>('/api/meta')]);
  if (!me.ok || !meta.ok) return null;
  const allowed = meta.body.entities.find((e) => e.name === entity)?.actions ?? [];
  return actions.every((a) => allowed.includes(a)) ? me.body.id : null;
}

/** Whether user `userId` is no viewer of application `appId` (a member with another role, or a non-member reading it through a wider grant). */
async function noViewer(api: PageApi, appId: string, userId: string): Promise<boolean> {
  const member = await api.get<{ items: { role: string }[] }>(`/api/bi/apps/${appId}/members?userId=${encodeURIComponent(userId)}&size=1`);
  if (!member.ok) return true;
  return member.body.items[0]?.role !== 'viewer';
}

/** The entities of an application its owners and editors change (its viewers only read them). */
type AppEntity = 'BiSheet' | 'BiWidget' | 'BiQuery' | 'BiDataSource';

/**
 * Whether the caller may change `entity` rows of application `appId`: the
 * API's model must grant the action at all, and a member of the application
 * must not be listed as a viewer. A non-member who reads the application holds
 * a wider grant (BI administration). A refusal the API still answers (403) is
 * shown by the page's script when it saves.
 */
export async function mayChange(api: PageApi, appId: string, entity: AppEntity, actions: string[] = ['update']): Promise<boolean> {
  const userId = await grantedTo(api, entity, actions);
  return userId !== null && noViewer(api, appId, userId);
}

export interface SheetGroup {
  app: { id: string; name: string };
  sheets: { id: string; name: string }[];
}

const MAX_APPS = 100;
const MAX_SHEETS = 500;

/**
 * The sheets the caller may add widgets to, by application (applications by
 * name, sheets in their order): those of the applications they read and are no
 * viewer of (as mayChange decides), the first MAX_APPS applications only.
 */
export async function widgetSheets(api: PageApi): Promise<SheetGroup[]> {
  const userId = await grantedTo(api, 'BiWidget', ['create']);
  if (userId === null) return [];
  const apps = await api.get<{ items: { id: string; name: string }[] }>(`/api/bi/apps?sort=name&size=${MAX_APPS}`);
  if (!apps.ok) return [];
  const groups = await Promise.all(
    apps.body.items.map(async (app): Promise<SheetGroup | null> => {
      if (!(await noViewer(api, app.id, userId))) return null;
      const sheets = await api.get<{ items: { id: string; name: string }[] }>(`/api/bi/apps/${app.id}/sheets?sort=position,name&size=${MAX_SHEETS}`);
      if (!sheets.ok || !sheets.body.items.length) return null;
      return { app: { id: app.id, name: app.name }, sheets: sheets.body.items.map((s) => ({ id: s.id, name: s.name })) };
    }),
  );
  return groups.filter((g) => g !== null);
}

// only the keys: the texts themselves come through api.text, in the user's language
const KEYS = Object.keys(JSON.parse(readFileSync(new URL('./texts.en.json', import.meta.url), 'utf8')) as Record<string, string>);

/**
 * The JSON of a page's <script id="bi-texts"> block: every text whose key starts with
 * one of `groups` ("chart" → chart.none, chart.summary…), with its {placeholders}
 * left for the scripts to fill.
 */
export function scriptTexts(api: PageApi, groups: string[]): string {
  const keys = KEYS.filter((key) => groups.some((g) => key.startsWith(`${g}.`)));
  return scriptJson(Object.fromEntries(keys.map((key) => [key, api.text(key)])));
}
