// The module SDK: the one core file module code (plugins/<module>/) imports.
// Handlers and hooks receive a ModuleContext (context/module-context.ts):
// scoped data access per entity, transactions, after-commit work and the
// caller; never the Kernel, an unscoped EntityManager or a secret. See
// docs/writing-a-module.md for a walk-through, docs/reference/sdk.md for every export.
export type { PluginModule, PluginHandler, RouteSchemas, TypedRequest, Subscriber, JobDefinition, JobRun, PlinthEvent, ConsolePage, PageApi, PageAnswer } from './context/plugin-module.ts';
export { handler, pageError, problemText, required, scriptJson } from './context/plugin-module.ts';
export { Type } from 'typebox';
export type { EntityHooks, WriteEvent, BeforeWriteEvent } from './context/hooks.ts';
export type { ModuleContext, EntityData, Principal, EnqueueOptions } from './context/module-context.ts';
export type { MenuEntry } from './context/menu-access.ts';
export { EVENT_PATTERN, matchesPattern } from './manifest/events.ts';
export type { Row, Dto } from './crud/row-mapper.ts';
export type { AggregateQuery, AggregateRow, AggregateColumn, GroupKey, Measure, FieldFilter, TypedColumn } from './crud/aggregate.ts';
export type { Analysis } from './crud/crud-service.ts';
export type { EntityInfo, FieldInfo } from './context/model-info.ts';
export { FILTER_OPS, type FilterOp } from './crud/aggregate-filters.ts';
export { compileColumnAggregate, type ColumnStatement, type ColumnTable } from './crud/column-aggregate.ts';
export type { Authenticator, Authentication } from './context/authenticators.ts';
export { SYSTEM } from './access/principal.ts';
export { validationError } from './context/module-context.ts';
export { httpError, titleOf, type ErrorCode } from './errors.ts';
export { etag } from './crud/crud-service.ts';
export { hashPassword } from './auth/passwords.ts';
export { pick } from './i18n.ts';
export { addDays } from './calendar.ts';
export { ADMIN_ROLE } from './access/role-directory.ts';
export { readUpload, type Upload } from './files/upload.ts';
export type { TenantFiles, StoredFile, FileContent, FileSource } from './files/file-store.ts';
export type { ExternalDb, ExternalTarget, ExternalResult, ExternalSchema, ExternalTable, ExternalColumn, ExternalDbErrorCode, SslMode } from './db/external-db.ts';
export { ExternalDbError, SSL_MODES } from './db/external-db.ts';
