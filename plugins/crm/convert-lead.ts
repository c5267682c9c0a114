// POST /api/crm/leads/:id/convert: the customer, its primary contact and, if
// asked, an opportunity, made from a lead, and the lead marked converted, in
// one transaction. Every write goes through the generic CrudService, so the
// access rules, reference checks, the lead's state flow and the activity log
// apply as on the generated routes; any failure rolls all of it back.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kernel } from '../../core/kernel.ts';
import { CrudService, crudContext, httpError } from '../../core/plugin-api.ts';

type Row = Record<string, any>;

interface ConvertBody {
  customer?: { name?: string; code?: string | null; currency?: string };
  opportunity?: { name?: string; amount?: string | null; expectedCloseDate?: string | null; ownerId?: string | null; stage?: string; probability?: number };
}

const byKernel = new WeakMap<Kernel, Map<string, CrudService>>();
function service(kernel: Kernel, entity: string): CrudService {
  let services = byKernel.get(kernel);
  if (!services) byKernel.set(kernel, (services = new Map()));
  let s = services.get(entity);
  if (!s) services.set(entity, (s = new CrudService(kernel.model(entity), kernel.models, kernel.secrets)));
  return s;
}

/** Drops null and undefined values: a create then applies the field's default. */
const given = (o: Row) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined));

export async function convertLead(request: FastifyRequest, reply: FastifyReply, kernel: Kernel): Promise<unknown> {
  const { id } = request.params as { id: string };
  const body = (request.body ?? {}) as ConvertBody;
  const ctx = crudContext(request, kernel);
  const [leads, customers, contacts, opportunities] = ['Lead', 'Customer', 'Contact', 'Opportunity'].map((e) => service(kernel, e));

  const rows = await ctx.em.transactional(async (em) => {
    const tx = { ...ctx, em };
    // locked, so two conversions of one lead run one after the other: the second sees "converted"
    const lead = await leads.lock(tx, id);
    if (lead.status === 'converted') throw httpError('CONFLICT', `lead ${id} is already converted`);

    const c = body.customer ?? {};
    const customer = await customers.create(tx, given({
      name: c.name ?? lead.companyName, code: c.code, currency: c.currency ?? lead.currency,
      email: lead.email, phone: lead.phone, ownerId: lead.ownerId, status: 'active',
    }));
    const contact = await contacts.create(tx, given({
      customerId: customer.id, firstName: lead.firstName, lastName: lead.lastName, email: lead.email, phone: lead.phone, isPrimary: true,
    }));
    let opportunity: Row | null = null;
    if (body.opportunity) {
      const o = body.opportunity;
      opportunity = await opportunities.create(tx, given({
        name: o.name ?? lead.title, customerId: customer.id, amount: o.amount ?? lead.estimatedValue, currency: customer.currency,
        ownerId: o.ownerId ?? lead.ownerId, expectedCloseDate: o.expectedCloseDate, stage: o.stage, probability: o.probability,
      }));
    }
    // the state flow decides whether this lead may be converted (a lost one may not: 422)
    const converted = await leads.update(tx, id, {}, {
      replace: false, system: true, auditAction: 'convert',
      set: { status: 'converted', customerId: customer.id, contactId: contact.id, opportunityId: opportunity?.id ?? null, convertedAt: new Date() },
    });
    return { lead: converted, customer, contact, opportunity };
  });

  const dto = (s: CrudService, row: Row | null) => (row ? s.toDto(row, ctx.read) : null);
  reply.code(201).header('location', `/api/crm/customers/${rows.customer.id}`);
  return { lead: dto(leads, rows.lead), customer: dto(customers, rows.customer), contact: dto(contacts, rows.contact), opportunity: dto(opportunities, rows.opportunity) };
}
