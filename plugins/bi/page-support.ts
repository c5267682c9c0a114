// What the BI pages share: whether the caller may change an application's
// sheets and widgets, as far as the API tells it (which edit controls a page
// shows: the console never decides access, the API still refuses what it must,
// and the scripts show that refusal), and the texts the pages' scripts read.
import { readFileSync } from 'node:fs';
import type { PageApi } from '../../core/plugin-api.ts';
import { scriptJson } from '../../core/plugin-api.ts';

/** A module text in the user's language (PageApi.text), handed to the helpers that build a page's strings. */
export type Text = PageApi['text'];

interface Meta {
  entities: { name: string; actions: string[] }[];
}

/**
 * Whether the caller may change `entity` rows (BiSheet, BiWidget) of application
 * `appId`: the API's model must grant the action at all, and a member of the
 * application must not be listed as a viewer. A non-member who reads the
 * application holds a wider grant (BI administration). A refusal the API
 * still answers (403) is shown by the page's script when it saves.
 */
export async function mayChange(api: PageApi, appId: string, entity: 'BiSheet' | 'BiWidget', actions: string[] = ['update']): Promise<boolean> {
  const [me, meta] = await Promise.all([api.get<{ id: string }>('/api/auth/me'), api.get<Meta>('/api/meta')]);
  if (!me.ok || !meta.ok) return false;
  const allowed = meta.body.entities.find((e) => e.name === entity)?.actions ?? [];
  if (!actions.every((a) => allowed.includes(a))) return false;
  const member = await api.get<{ items: { role: string }[] }>(`/api/bi/apps/${appId}/members?userId=${encodeURIComponent(me.body.id)}&size=1`);
  if (!member.ok) return true;
  return member.body.items[0]?.role !== 'viewer';
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
