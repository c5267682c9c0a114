// The core module's code beyond its manifest: user management the generic
// CRUD cannot say (a password on create, role and company assignment) and the
// rules around role and user writes.
import type { PluginModule } from '../../core/plugin-api.ts';
import { createUser, setUserPassword } from './users.ts';
import { listUserCompanies, listUserRoles, setUserCompanies, setUserRoles } from './assignments.ts';
import { roleHooks, userHooks } from './hooks.ts';

export const handlers: PluginModule['handlers'] = { createUser, setUserPassword, listUserRoles, setUserRoles, listUserCompanies, setUserCompanies };

export const hooks: PluginModule['hooks'] = { Role: roleHooks, User: userHooks };
