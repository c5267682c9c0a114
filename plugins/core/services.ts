// One CrudService per entity and kernel, built on first use.
import { CrudService } from '../../core/plugin-api.ts';
import type { Kernel } from '../../core/kernel.ts';

const byKernel = new WeakMap<Kernel, Map<string, CrudService>>();

export function serviceOf(kernel: Kernel, entity: string): CrudService {
  let services = byKernel.get(kernel);
  if (!services) byKernel.set(kernel, (services = new Map()));
  let service = services.get(entity);
  if (!service) services.set(entity, (service = new CrudService(kernel.model(entity), kernel.models, kernel.secrets)));
  return service;
}

export const entity = (kernel: Kernel, name: string) => kernel.model(name).schema;
