// The core dashboard (/dashboard, seed §1): cards of active companies,
// organizations, users and groups, the users and companies added last, and the
// database size with its distribution. Read through the API as the user. Seed
// §5: the page is for full-access users; its menu entry says so ("admin"), so
// the console shows and opens it for them only.
import type { ConsolePage, PageApi } from '../../core/plugin-api.ts';

const RECENT = 5;

interface List {
  items: Record<string, any>[];
  total: number;
}

const total = async (api: PageApi, url: string) => {
  const res = await api.get<List>(url);
  return res.ok ? res.body.total : null;
};

const recent = async (api: PageApi, url: string) => {
  const res = await api.get<List>(`${url}?sort=-createdAt&size=${RECENT}`);
  return res.ok ? res.body.items : null;
};

/** 1536 → "1.5 KiB"; less than a KiB is `inBytes`' text in the user's language ("512 bytes") */
function formatBytes(bytes: number, inBytes: (count: number) => string): string {
  if (bytes < 1024) return inBytes(bytes);
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

const day = (iso: unknown) => (typeof iso === 'string' ? iso.slice(0, 10) : '');

export const dashboardPage: ConsolePage = {
  view: new URL('./views/dashboard.hbs', import.meta.url),
  async load(api) {
    const [companies, organizations, users, groups, newUsers, newCompanies, size] = await Promise.all([
      total(api, '/api/companies?isActive=true&size=1'),
      total(api, '/api/organizations?isActive=true&size=1'),
      total(api, '/api/users?isActive=true&size=1'),
      total(api, '/api/groups?isActive=true&size=1'),
      recent(api, '/api/users'),
      recent(api, '/api/companies'),
      api.get<{ totalBytes: number; schemas: { name: string; bytes: number; tables?: { name: string; bytes: number }[] }[] }>('/api/auth/db'),
    ]);
    const parts = size.ok ? size.body.schemas.flatMap((s) => s.tables ?? [{ name: s.name, bytes: s.bytes }]) : [];
    const sizeTotal = size.ok ? size.body.totalBytes : 0;
    const bytes = (n: number) => formatBytes(n, (count) => api.text('dashboard.bytes', { count }));
    return {
      cards: [
        { label: api.text('dashboard.activeCompanies'), value: companies, url: '/companies' },
        { label: api.text('dashboard.activeOrganizations'), value: organizations, url: '/organizations' },
        { label: api.text('dashboard.activeUsers'), value: users, url: '/users' },
        { label: api.text('dashboard.activeGroups'), value: groups, url: '/groups' },
      ].filter((c) => c.value !== null),
      newUsers: newUsers?.map((u) => ({ name: u.name, email: u.email, added: day(u.createdAt), url: `/users/${u.id}` })) ?? null,
      newCompanies: newCompanies?.map((c) => ({ name: c.name ?? c.code, code: c.code, added: day(c.createdAt), url: `/companies/${c.id}` })) ?? null,
      database: size.ok
        ? {
            total: bytes(sizeTotal),
            // the tooltip's text, and the same as a table for screen readers and keyboards
            tooltip: parts.map((p) => `${p.name}: ${bytes(p.bytes)}`).join('\n'),
            parts: parts.map((p) => ({ name: p.name, size: bytes(p.bytes), share: sizeTotal ? `${((100 * p.bytes) / sizeTotal).toFixed(1)} %` : '' })),
          }
        : null,
    };
  },
};
