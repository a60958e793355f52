/**
 * Operator commands that do from a shell what the dashboard API does: create a user, a
 * store, an API key; ban or unban a store; seed the demo store. Each command's arguments are
 * checked (with the same schemas as the API) before anything starts, so a usage mistake
 * never boots a database; then the command runs against the configured database, or the
 * embedded one of a running `svc serve` on the same data directory.
 */
import { parseArgs } from 'node:util';
import { API_KEY_SCOPES, ZApiKeyScope, ZCredentials, ZEmail, ZTimestamp, ZCreateStoreInput } from '@svc/schemas';
import { z } from 'zod';
import type { Runtime } from './runtime.js';
import { seedDemo } from './seed-demo.js';
import { createApiKey } from './modules/api-keys/api-keys.service.js';
import { UserSchema } from './modules/identity/identity.entities.js';
import { createUser } from './modules/identity/identity.service.js';
import { StoreSchema } from './modules/stores/stores.entities.js';
import { createStore, setStoreBanned } from './modules/stores/stores.service.js';

/** A mistake in how the command was called: exit 2 with the usage line. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface CliCommand<Input = unknown> {
  usage: string;
  summary: string;
  /** Checks the arguments and returns the command's input; throws UsageError. No I/O. */
  parse(args: string[]): Input;
  run(runtime: Runtime, input: Input): Promise<string>;
}

function check<T extends z.ZodType>(schema: T, value: unknown, name?: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new UsageError(
      result.error.issues
        .map((issue) => {
          const where = [name, ...issue.path.map(String)].filter(Boolean).join('.');
          return `${where ? `${where}: ` : ''}${issue.message}`;
        })
        .join('; '),
    );
  }
  return result.data;
}

/** node:util's parseArgs over string options, strict, with every option in `required` present. */
function parseOptions<N extends string>(args: string[], names: readonly N[], required: readonly N[], positionals = 0) {
  const options = Object.fromEntries(names.map((name) => [name, { type: 'string' as const }]));
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: positionals > 0 });
  } catch (error) {
    // parseArgs says what was wrong ("Unknown option '--x'"); its hint about '--' only confuses here.
    throw new UsageError((error as Error).message.replace(/\. To specify a positional argument.*$/s, '.'));
  }
  const missing = required.filter((name) => parsed.values[name] === undefined).map((name) => `--${name}`);
  if (missing.length > 0) throw new UsageError(`missing ${missing.join(', ')}`);
  if (parsed.positionals.length !== positionals) {
    throw new UsageError(
      positionals === 0
        ? `unexpected argument ${parsed.positionals[0]}`
        : `expected ${positionals} argument${positionals > 1 ? 's' : ''}`,
    );
  }
  return { values: parsed.values as Partial<Record<N, string>>, positionals: parsed.positionals };
}

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);

function context(runtime: Runtime) {
  return { em: runtime.deps.orm.em.fork(), clock: runtime.deps.clock, deps: runtime.deps };
}

async function userByEmail(runtime: Runtime, email: string) {
  const user = await runtime.deps.orm.em.fork().findOne(UserSchema, { email });
  if (!user) throw new UsageError(`no user has the e-mail ${email}`);
  return user;
}

const command = <Input>(definition: CliCommand<Input>): CliCommand => definition;

export const CLI_COMMANDS: Record<string, CliCommand> = {
  'create-user': command({
    usage: 'svc create-user --email <email> --password <password>   (or the password in SVC_PASSWORD)',
    summary: 'create a seller account',
    parse(args) {
      const { values } = parseOptions(args, ['email', 'password'], ['email']);
      const password = values.password ?? process.env.SVC_PASSWORD;
      if (password === undefined) throw new UsageError('missing --password (or SVC_PASSWORD)');
      return check(ZCredentials, { email: values.email, password });
    },
    async run(runtime, input) {
      const user = await createUser(context(runtime), input);
      return `created user ${user.id} <${user.email}>`;
    },
  }),
  'create-store': command({
    usage: 'svc create-store --owner <email> --name <name> --subdomain <subdomain> [--currency USD]',
    summary: 'create a store owned by a user',
    parse(args) {
      const { values } = parseOptions(args, ['owner', 'name', 'subdomain', 'currency'], ['owner', 'name', 'subdomain']);
      return {
        owner: check(ZEmail, values.owner, 'owner'),
        store: check(ZCreateStoreInput, { name: values.name, subdomain: values.subdomain, currency: values.currency }),
      };
    },
    async run(runtime, input) {
      const owner = await userByEmail(runtime, input.owner);
      const store = await createStore(context(runtime), owner, input.store);
      return `created store ${store.id} (${store.subdomain})`;
    },
  }),
  'create-api-key': command({
    usage: `svc create-api-key --owner <email> --name <name> --scopes <scope,...> --stores <id or subdomain,...> [--expires <ISO time>]\n  scopes: ${API_KEY_SCOPES.join(', ')}`,
    summary: 'create a merchant API key (printed once)',
    parse(args) {
      const { values } = parseOptions(
        args,
        ['owner', 'name', 'scopes', 'stores', 'expires'],
        ['owner', 'name', 'scopes', 'stores'],
      );
      const stores = list(values.stores);
      if (stores.length === 0) throw new UsageError('--stores names no store');
      return {
        owner: check(ZEmail, values.owner, 'owner'),
        name: check(z.string().trim().min(1).max(100), values.name, 'name'),
        scopes: check(z.array(ZApiKeyScope).min(1), list(values.scopes), 'scopes'),
        stores,
        expiresAt: values.expires === undefined ? undefined : check(ZTimestamp, values.expires, 'expires'),
      };
    },
    async run(runtime, input) {
      const owner = await userByEmail(runtime, input.owner);
      const em = runtime.deps.orm.em.fork();
      const storeIds: string[] = [];
      for (const ref of input.stores) {
        const store = await em.findOne(StoreSchema, { $or: [{ id: ref }, { subdomain: ref.toLowerCase() }] });
        if (!store) throw new UsageError(`no store has the id or subdomain ${ref}`);
        storeIds.push(store.id);
      }
      const { apiKey, key } = await createApiKey(context(runtime), owner, {
        name: input.name,
        scopes: input.scopes,
        storeIds,
        expiresAt: input.expiresAt,
      });
      return `created API key ${apiKey.id} (${apiKey.scopes.join(', ')}); it is shown only now:\n${key}`;
    },
  }),
  'seed-demo': command({
    usage: 'svc seed-demo',
    summary: 'create a demo store with products, keys, a coupon, orders and an API key',
    parse(args) {
      parseOptions(args, [], []);
      return undefined;
    },
    run: (runtime) => seedDemo(runtime),
  }),
  'ban-store': command({
    usage: 'svc ban-store <subdomain>',
    summary: 'ban a store (its storefront and checkout stop)',
    parse: (args) => check(z.string().min(1), parseOptions(args, [], [], 1).positionals[0], 'subdomain'),
    async run(runtime, subdomain) {
      const store = await setStoreBanned(runtime.deps.orm.em.fork(), subdomain, true, runtime.deps.clock.now());
      return `banned ${store.subdomain}`;
    },
  }),
  'unban-store': command({
    usage: 'svc unban-store <subdomain>',
    summary: 'lift a ban',
    parse: (args) => check(z.string().min(1), parseOptions(args, [], [], 1).positionals[0], 'subdomain'),
    async run(runtime, subdomain) {
      const store = await setStoreBanned(runtime.deps.orm.em.fork(), subdomain, false, runtime.deps.clock.now());
      return `unbanned ${store.subdomain}`;
    },
  }),
};

/** The process commands take no arguments; checked the same way. */
export function parseNoArguments(args: string[]): void {
  parseOptions(args, [], []);
}
