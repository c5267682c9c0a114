// POST /api/crm/leads/:id/convert: the customer, its primary contact and, if
// asked, an opportunity, made from a lead, and the lead marked converted, in
// one transaction. Every write goes through the entities' scoped data access, so the
// access rules, reference checks, the lead's state flow and the activity log
// apply as on the generated routes; any failure rolls all of it back.
import { handler, httpError, Type, type Row } from '../../core/plugin-api.ts';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

const ConvertLeadSchemas = {
  params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
  body: Type.Object(
    {
      customer: Type.Optional(
        Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            code: Type.Optional(Nullable(Type.String({ maxLength: 40 }))),
            currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$' })),
          },
          { additionalProperties: false, description: 'overrides of the customer made from the lead (default: its company name, currency and owner)' },
        ),
      ),
      opportunity: Type.Optional(
        Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            amount: Type.Optional(Nullable(Type.String({ pattern: '^(0|[1-9]\\d{0,11})(\\.\\d{1,2})?$' }))),
            expectedCloseDate: Type.Optional(Nullable(Type.String({ format: 'date' }))),
            // x-entity: the console offers the sales representatives the user may read
            ownerId: Type.Optional(Nullable(Type.String({ format: 'uuid', 'x-entity': 'SalesRep', title: 'Sales representative' }))),
            stage: Type.Optional(Type.Enum(['prospecting', 'qualification', 'proposal', 'negotiation'])),
            probability: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
          },
          { additionalProperties: false, description: 'create an opportunity for the new customer as well' },
        ),
      ),
    },
    { additionalProperties: false },
  ),
  response: {
    201: Type.Object(
      {
        lead: Type.Ref('CrmLead'),
        customer: Type.Ref('CrmCustomer'),
        contact: Type.Ref('CrmContact'),
        opportunity: Type.Union([Type.Ref('CrmOpportunity'), Type.Null()]),
      },
      { additionalProperties: false, description: 'The lead, converted, and the rows made from it; Location names the customer', headers: ['Location'] },
    ),
  },
};

/** Drops null and undefined values: a create then applies the field's default. */
const given = (o: Row) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined));

export const convertLead = handler(ConvertLeadSchemas, async (ctx, request, reply) => {
  const { id } = request.params;
  const body = request.body ?? {};

  const rows = await ctx.transaction(async (tx) => {
    const [leads, customers, contacts, opportunities] = ['Lead', 'Customer', 'Contact', 'Opportunity'].map((e) => tx.data(e));
    // locked, so two conversions of one lead run one after the other: the second sees "converted"
    const lead = await leads.lock(id);
    if (lead.status === 'converted') throw httpError('CONFLICT', `lead ${id} is already converted`);

    const c = body.customer ?? {};
    const customer = await customers.create(
      given({
        name: c.name ?? lead.companyName,
        code: c.code,
        currency: c.currency ?? lead.currency,
        email: lead.email,
        phone: lead.phone,
        ownerId: lead.ownerId,
        status: 'active',
      }),
    );
    const contact = await contacts.create(
      given({
        customerId: customer.id,
        firstName: lead.firstName,
        lastName: lead.lastName,
        email: lead.email,
        phone: lead.phone,
        isPrimary: true,
      }),
    );
    let opportunity: Row | null = null;
    if (body.opportunity) {
      const o = body.opportunity;
      opportunity = await opportunities.create(
        given({
          name: o.name ?? lead.title,
          customerId: customer.id,
          amount: o.amount ?? lead.estimatedValue,
          currency: customer.currency,
          ownerId: o.ownerId ?? lead.ownerId,
          expectedCloseDate: o.expectedCloseDate,
          stage: o.stage,
          probability: o.probability,
        }),
      );
    }
    // the state flow decides whether this lead may be converted (a lost one may not: 422)
    const converted = await leads.update(
      id,
      {},
      {
        system: true,
        auditAction: 'convert',
        set: { status: 'converted', customerId: customer.id, contactId: contact.id, opportunityId: opportunity?.id ?? null, convertedAt: new Date() },
      },
    );
    await tx.emit('crm.lead.converted', {
      entityId: id,
      payload: { leadId: id, customerId: customer.id, contactId: contact.id, opportunityId: opportunity?.id ?? null },
    });
    return { lead: converted, customer, contact, opportunity };
  });

  const dto = (entity: string, row: Row | null) => (row ? ctx.data(entity).toDto(row) : null);
  reply.code(201).header('location', `/api/crm/customers/${rows.customer.id}`);
  return { lead: dto('Lead', rows.lead), customer: dto('Customer', rows.customer), contact: dto('Contact', rows.contact), opportunity: dto('Opportunity', rows.opportunity) };
});
