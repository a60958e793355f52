/**
 * Operator commands that do from a shell what the dashboard API does: create a user, a
 * store, an API key; ban or unban a store; seed the demo store. Each validates its arguments with the same
 * schemas as the API.
 */
import { parseArgs } from 'node:util';
import { ZCreateApiKeyInput, ZCreateStoreInput, ZCredentials, ZEmail } from '@svc/schemas';
import { z } from 'zod';
import type { Runtime } from './runtime.js';
import { seedDemo } from './seed-demo.js';
import { createApiKey } from './modules/api-keys/api-keys.service.js';
import { UserSchema } from './modules/identity/identity.entities.js';
import { createUser } from './modules/identity/identity.service.js';
import { StoreSchema } from './modules/stores/stores.entities.js';
import { createStore, setStoreBanned } from './modules/stores/stores.service.js';

export class UsageError extends Error {}

function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new UsageError(result.error.issues.map((issue) => `${issue.path.join('.') || 'value'}: ${issue.message}`).join('\n'));
  }
  return result.data;
}

function context(runtime: Runtime) {
  return { em: runtime.deps.orm.em.fork(), clock: runtime.deps.clock, deps: runtime.deps };
}

async function userByEmail(runtime: Runtime, email: string) {
  const user = await runtime.deps.orm.em.fork().findOne(UserSchema, { email: parse(ZEmail, email) });
  if (!user) throw new UsageError(`no user has the e-mail ${email}`);
  return user;
}

export const CLI_COMMANDS: Record<string, { usage: string; run: (runtime: Runtime, args: string[]) => Promise<string> }> = {
  'create-user': {
    usage: 'svc create-user --email <email> --password <password>',
    async run(runtime, args) {
      const { values } = parseArgs({ args, options: { email: { type: 'string' }, password: { type: 'string' } } });
      const input = parse(ZCredentials, { email: values.email, password: values.password ?? process.env.SVC_PASSWORD });
      const user = await createUser(context(runtime), input);
      return `created user ${user.id} <${user.email}>`;
    },
  },
  'create-store': {
    usage: 'svc create-store --owner <email> --name <name> --subdomain <subdomain> [--currency USD]',
    async run(runtime, args) {
      const { values } = parseArgs({ args, options: { owner: { type: 'string' }, name: { type: 'string' }, subdomain: { type: 'string' }, currency: { type: 'string' } } });
      const owner = await userByEmail(runtime, values.owner ?? '');
      const store = await createStore(context(runtime), owner, parse(ZCreateStoreInput, { name: values.name, subdomain: values.subdomain, currency: values.currency }));
      return `created store ${store.id} (${store.subdomain})`;
    },
  },
  'create-api-key': {
    usage: 'svc create-api-key --owner <email> --name <name> --scopes order:read,order:update --stores <id or subdomain,...> [--expires <ISO time>]',
    async run(runtime, args) {
      const { values } = parseArgs({
        args,
        options: { owner: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, stores: { type: 'string' }, expires: { type: 'string' } },
      });
      const owner = await userByEmail(runtime, values.owner ?? '');
      const em = runtime.deps.orm.em.fork();
      const storeIds: string[] = [];
      for (const ref of (values.stores ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
        const store = await em.findOne(StoreSchema, { $or: [{ id: ref }, { subdomain: ref.toLowerCase() }] });
        if (!store) throw new UsageError(`no store ${ref}`);
        storeIds.push(store.id);
      }
      const input = parse(ZCreateApiKeyInput, {
        name: values.name,
        scopes: (values.scopes ?? '').split(',').map((s) => s.trim()).filter(Boolean),
        storeIds,
        expiresAt: values.expires,
      });
      const { apiKey, key } = await createApiKey(context(runtime), owner, input);
      return `created API key ${apiKey.id} (${apiKey.scopes.join(', ')}); it is shown only now:\n${key}`;
    },
  },
  'seed-demo': {
    usage: 'svc seed-demo',
    run: (runtime) => seedDemo(runtime),
  },
  'ban-store': {
    usage: 'svc ban-store <subdomain>',
    async run(runtime, args) {
      const store = await setStoreBanned(runtime.deps.orm.em.fork(), parse(z.string().min(1), args[0]), true, runtime.deps.clock.now());
      return `banned ${store.subdomain}`;
    },
  },
  'unban-store': {
    usage: 'svc unban-store <subdomain>',
    async run(runtime, args) {
      const store = await setStoreBanned(runtime.deps.orm.em.fork(), parse(z.string().min(1), args[0]), false, runtime.deps.clock.now());
      return `unbanned ${store.subdomain}`;
    },
  },
};
