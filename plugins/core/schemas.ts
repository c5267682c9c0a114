// The schemas of the core module's custom routes (TypeBox): they type each
// handler's request, and the kernel validates, documents and serialises the
// routes from them.
import { Type } from '../../core/plugin-api.ts';

const Uuid = (description?: string) => Type.String({ format: 'uuid', ...(description ? { description } : {}) });
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const Password = Type.String({ minLength: 8, maxLength: 1024, writeOnly: true, description: 'stored as a scrypt hash, never returned' });
const page = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Object(
    {
      items: Type.Array(item),
      page: Type.Integer(),
      size: Type.Integer(),
      total: Type.Integer(),
    },
    { additionalProperties: false },
  );

export const UserParams = Type.Object({ id: Uuid() }, { additionalProperties: false });

export const NewUser = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254 }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    password: Password,
    isActive: Type.Optional(Type.Boolean()),
    language: Type.Optional(Nullable(Type.String({ maxLength: 35 }))),
    primaryCompanyId: Type.Optional(Nullable(Uuid('also makes the user a member of that company'))),
    organizationId: Type.Optional(Nullable(Uuid())),
  },
  { additionalProperties: false },
);

export const NewPassword = Type.Object({ password: Password }, { additionalProperties: false });

export const RoleList = page(Type.Object({ id: Uuid(), name: Type.String() }, { additionalProperties: false }));
export const CompanyList = page(Type.Object({ id: Uuid(), code: Type.String(), name: Nullable(Type.String()), isActive: Type.Boolean() }, { additionalProperties: false }));

export const RoleIds = Type.Object(
  {
    roleIds: Type.Array(Uuid(), { uniqueItems: true, maxItems: 200, description: 'ids of the roles the user holds from now on' }),
  },
  { additionalProperties: false },
);
export const CompanyIds = Type.Object(
  {
    companyIds: Type.Array(Uuid(), { uniqueItems: true, maxItems: 200, description: 'ids of the companies the user belongs to from now on' }),
  },
  { additionalProperties: false },
);
