// What the project pages of the console share beyond the SDK's page helpers
// (required, problemText, pageError, scriptJson): the names of users, read
// through the API as the user, and how values read.
import type { PageApi } from '../../../core/plugin-api.ts';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Most users a page looks up by id (one API read each). */
const MAX_NAMES = 50;

/** id → name of these users, as far as the reader may read them (others are left out). */
export async function userNames(api: PageApi, ids: Iterable<string | null | undefined>): Promise<Map<string, string>> {
  const wanted = [...new Set([...ids].filter((id): id is string => typeof id === 'string' && UUID.test(id)))].slice(0, MAX_NAMES);
  const names = new Map<string, string>();
  await Promise.all(
    wanted.map(async (id) => {
      const res = await api.get<{ name?: string; email?: string }>(`/api/users/${id}`);
      if (res.ok) names.set(id, res.body.name || res.body.email || id);
    }),
  );
  return names;
}

/** "in_progress" → "In progress" */
export const humanize = (value: string): string => {
  const words = value
    .replace(/Id$/, '')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** "86.00" → "86", "2.50" → "2.5" */
export const hours = (value: unknown): string => (value === null || value === undefined ? '' : Number(value).toLocaleString('en', { maximumFractionDigits: 2 }));
