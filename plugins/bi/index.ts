// The BI module's code beyond its manifest (manifests/bi.json): the semantic
// model over the loaded manifests and the applications' external data sources
// (PostgreSQL databases, read-only), the analytics query language, and the
// rules of applications, sheets and widgets. Who sees which application is the
// manifest's relational grants; what analytics shows is the caller's own rights
// to every table involved, compiled by the kernel. Its console pages: an
// application's pages (sheets) and its data (sources, saved queries), a
// sheet's dashboard and the analytics builder.
import type { PluginModule } from '../../core/plugin-api.ts';
import { appHooks, memberHooks } from './apps.ts';
import { setSheetOrder } from './sheets.ts';
import { setSheetLayout, widgetHooks } from './widgets.ts';
import { getDatabase, listRelations } from './semantic-model.ts';
import { getSchema, listTables } from './app-tables.ts';
import { getAnalytics, getPostedAnalytics } from './analytics.ts';
import { getAnalyticsCsv, getPostedAnalyticsCsv } from './csv-export.ts';
import { getSheetData } from './render.ts';
import { sheetsPage } from './sheets-page.ts';
import { dashboardPage } from './dashboard-page.ts';
import { analyticsPage } from './analytics-page.ts';
import { dataPage } from './data-page.ts';
import { createDataSource, dataSourceHooks, refreshDataSource } from './data-sources.ts';

export const handlers: PluginModule['handlers'] = {
  setSheetOrder,
  setSheetLayout,
  listTables,
  listRelations,
  getSchema,
  getDatabase,
  getAnalytics,
  getPostedAnalytics,
  getAnalyticsCsv,
  getPostedAnalyticsCsv,
  getSheetData,
  createDataSource,
  refreshDataSource,
};

export const hooks: PluginModule['hooks'] = {
  BiApp: appHooks,
  BiAppMember: memberHooks,
  BiWidget: widgetHooks,
  BiDataSource: dataSourceHooks,
};

export const pages: PluginModule['pages'] = {
  '/bi/apps/:id/sheets': sheetsPage,
  '/bi/apps/:id/sheets/:sheetId': dashboardPage,
  '/bi/apps/:id/data': dataPage,
  '/bi/analytics': analyticsPage,
};

// the pages' and their scripts' texts, which tenants translate like the manifest's labels
export const texts: PluginModule['texts'] = new URL('./texts.en.json', import.meta.url);
