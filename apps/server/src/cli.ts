/**
 * Operator commands that do from a shell what the dashboard API does: create a user, a
 * store, an API key; ban or unban a store; seed the demo store; copy the uploaded files into an
 * object store. Each command declares its options
 * once, and its parsing, its usage line and its `--help` are all made from that declaration.
 * Arguments are checked (with the same schemas as the API) before anything starts, so a usage
 * mistake never boots a database; then the command runs against the configured database, or the
 * embedded one of a running `svc serve` on the same data directory.
 */
import { parseArgs } from 'node:util';
import {
  API_KEY_SCOPES,
  ZApiKeyMode,
  ZApiKeyScope,
  ZCredentials,
  ZEmail,
  ZTimestamp,
  ZCreateStoreInput,
} from '@svc/schemas';
import { z } from 'zod';
import { ConfigError, parseStorageUrl } from './config.js';
import type { Runtime } from './runtime.js';
import { serviceContext } from './modules/request/context.js';

/** A mistake in how the command was called: exit 2 with the usage line. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** One `--name <value>` option. Usage, help and parsing are all made from this declaration. */
export interface CliOption<Name extends string = string> {
  name: Name;
  /** The placeholder in the usage line: `--owner <email>`. */
  value: string;
  /** One line for `--help`. */
  description: string;
  required?: boolean;
  /** Read when the option is absent (a password kept out of the shell's history). */
  env?: string;
}

/** A positional argument. */
export interface CliArgument {
  name: string;
  description: string;
}

export interface CliCommandDefinition<Name extends string, Input> {
  summary: string;
  /** More than the summary says, when there is more to say. */
  details?: string;
  options: readonly CliOption<Name>[];
  arguments?: readonly CliArgument[];
  /** A whole command line that works (shown by `--help`). */
  example: string;
  /** Checks the parsed options (required ones present) and returns the command's input; throws UsageError. No I/O. */
  parse(values: Partial<Record<Name, string>>, positionals: string[]): Input;
}

/** A command as main.ts sees it: its declaration, and its arguments parsed against it. */
export interface CliCommand<Input = unknown> {
  summary: string;
  details: string | undefined;
  options: readonly CliOption[];
  arguments: readonly CliArgument[];
  example: string;
  parse(args: string[]): Input;
}

export interface OperatorCommand<Input = unknown> extends CliCommand<Input> {
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

/** node:util's parseArgs over the declared string options, strict, with every required one present. */
function parseOptions(args: string[], declared: readonly CliOption[], positionals: readonly CliArgument[]) {
  const options = Object.fromEntries(declared.map((option) => [option.name, { type: 'string' as const }]));
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: positionals.length > 0 });
  } catch (error) {
    // parseArgs says what was wrong ("Unknown option '--x'"); its hint about '--' only confuses here.
    throw new UsageError((error as Error).message.replace(/\. To specify a positional argument.*$/s, '.'));
  }
  const values = parsed.values as Record<string, string | undefined>;
  for (const option of declared)
    if (values[option.name] === undefined && option.env) values[option.name] = process.env[option.env];
  const missing = declared
    .filter((option) => option.required && values[option.name] === undefined)
    .map((option) => `--${option.name}${option.env ? ` (or ${option.env})` : ''}`);
  if (missing.length > 0) throw new UsageError(`missing ${missing.join(', ')}`);
  if (parsed.positionals.length !== positionals.length) {
    throw new UsageError(
      positionals.length === 0
        ? `unexpected argument ${parsed.positionals[0]}`
        : `expected ${positionals.map((argument) => `<${argument.name}>`).join(' ')}`,
    );
  }
  return { values, positionals: parsed.positionals };
}

/** Declares a command: its options are the one list that parsing, the usage line and `--help` read. */
export function defineCommand<const Name extends string, Input>(
  definition: CliCommandDefinition<Name, Input>,
): CliCommand<Input> {
  const positionals = definition.arguments ?? [];
  return {
    summary: definition.summary,
    details: definition.details,
    options: definition.options,
    arguments: positionals,
    example: definition.example,
    parse(args) {
      const { values, positionals: given } = parseOptions(args, definition.options, positionals);
      return definition.parse(values as Partial<Record<Name, string>>, given);
    },
  };
}

/** An operator command: a declaration and what it does against the database. */
const operator = <const Name extends string, Input>(
  definition: CliCommandDefinition<Name, Input> & { run(runtime: Runtime, input: Input): Promise<string> },
): OperatorCommand<Input> => ({
  ...defineCommand(definition),
  run: (runtime, input) => definition.run(runtime, input),
});

/** Whether the arguments ask for the command's help (`--help` or `-h` anywhere an option can be). */
export function asksForHelp(args: string[]): boolean {
  const { tokens } = parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h' } },
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  return tokens.some((token) => token.kind === 'option' && token.name === 'help');
}

/** `svc <name> --owner <email> [--expires <time>] <subdomain>`, from the declaration. */
export function usageLine(name: string, command: CliCommand): string {
  const options = command.options.map((option) => {
    const text = `--${option.name} <${option.value}>`;
    return option.required ? text : `[${text}]`;
  });
  const positionals = command.arguments.map((argument) => `<${argument.name}>`);
  return ['svc', name, ...options, ...positionals].join(' ');
}

/** What `svc <name> --help` prints: the usage line, the summary, a line per option and argument, an example. */
export function helpText(name: string, command: CliCommand): string {
  const rows: Array<[string, string]> = [
    ...command.arguments.map((argument): [string, string] => [`<${argument.name}>`, argument.description]),
    ...command.options.map((option): [string, string] => {
      const required = option.required ? ` (required${option.env ? `, or ${option.env} in the environment` : ''})` : '';
      return [`--${option.name} <${option.value}>`, `${option.description}${required}`];
    }),
    ['-h, --help', 'print this help and exit'],
  ];
  const width = Math.max(...rows.map(([left]) => left.length));
  return [
    `usage: ${usageLine(name, command)}`,
    '',
    `${command.summary.charAt(0).toUpperCase()}${command.summary.slice(1)}.`,
    ...(command.details ? [command.details] : []),
    '',
    command.arguments.length > 0 ? 'Arguments and options:' : 'Options:',
    ...rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`),
    '',
    'Example:',
    `  ${command.example}`,
    '',
  ].join('\n');
}

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);

function context(runtime: Runtime) {
  return serviceContext(runtime.deps);
}

// Each command loads the services it calls when it runs (import() below), not with this module:
// main.ts reads these declarations for help and usage, which start nothing and load none of them.

async function userByEmail(runtime: Runtime, email: string) {
  const { UserSchema } = await import('./modules/identity/identity.entities.js');
  const user = await runtime.deps.orm.em.fork().findOne(UserSchema, { email });
  if (!user) throw new UsageError(`no user has the e-mail ${email}`);
  return user;
}

/** `--scopes all`: every scope the server defines (API_KEY_SCOPES in @svc/schemas). */
const ALL_SCOPES = 'all';

export const CLI_COMMANDS: Record<string, OperatorCommand> = {
  'create-user': operator({
    summary: 'create a seller account',
    options: [
      { name: 'email', value: 'email', description: 'the e-mail the seller signs in with', required: true },
      {
        name: 'password',
        value: 'password',
        description: 'at least 8 characters',
        required: true,
        env: 'SVC_PASSWORD',
      },
    ],
    example: "SVC_PASSWORD='a long passphrase' svc create-user --email you@example.com",
    parse: (values) => check(ZCredentials, { email: values.email, password: values.password }),
    async run(runtime, input) {
      const { createUser } = await import('./modules/identity/identity.service.js');
      const user = await createUser(context(runtime), input);
      return `created user ${user.id} <${user.email}>`;
    },
  }),
  'create-store': operator({
    summary: 'create a store owned by a user',
    options: [
      { name: 'owner', value: 'email', description: "the owner's e-mail (a user that exists)", required: true },
      { name: 'name', value: 'name', description: "the store's name", required: true },
      {
        name: 'subdomain',
        value: 'subdomain',
        description: 'lower-case letters, digits and dashes; its storefront is /s/<subdomain>',
        required: true,
      },
      { name: 'currency', value: 'code', description: 'ISO 4217 currency of its prices (default USD)' },
    ],
    example: "svc create-store --owner you@example.com --name 'My Shop' --subdomain my-shop --currency EUR",
    parse: (values) => ({
      owner: check(ZEmail, values.owner, 'owner'),
      store: check(ZCreateStoreInput, { name: values.name, subdomain: values.subdomain, currency: values.currency }),
    }),
    async run(runtime, input) {
      const { createStore } = await import('./modules/stores/stores.service.js');
      const owner = await userByEmail(runtime, input.owner);
      const store = await createStore(context(runtime), owner, input.store);
      return `created store ${store.id} (${store.subdomain})`;
    },
  }),
  'create-api-key': operator({
    summary: 'create a merchant API key (printed once)',
    options: [
      {
        name: 'owner',
        value: 'email',
        description: "the key's owner (its store permissions cap the key)",
        required: true,
      },
      { name: 'name', value: 'name', description: 'a name to recognise the key by (1-100 characters)', required: true },
      {
        name: 'scopes',
        value: 'scope,...',
        description: `comma-separated, or ${ALL_SCOPES} for every one: ${API_KEY_SCOPES.join(', ')}`,
        required: true,
      },
      {
        name: 'stores',
        value: 'store,...',
        description: 'comma-separated store ids or subdomains the key may reach',
        required: true,
      },
      { name: 'expires', value: 'ISO time', description: 'when the key stops working (default never)' },
      {
        name: 'mode',
        value: 'live|test',
        description: 'the objects the key reads and writes: live (default, sk_live_...) or test (sk_test_...)',
      },
    ],
    example: 'svc create-api-key --owner you@example.com --name ci --scopes order:read,order:update --stores my-shop',
    parse(values) {
      const stores = list(values.stores);
      if (stores.length === 0) throw new UsageError('--stores names no store');
      const scopes = list(values.scopes);
      if (scopes.includes(ALL_SCOPES) && scopes.length > 1)
        throw new UsageError(`--scopes ${ALL_SCOPES} stands alone (it already holds every scope)`);
      return {
        owner: check(ZEmail, values.owner, 'owner'),
        name: check(z.string().trim().min(1).max(100), values.name, 'name'),
        scopes: scopes[0] === ALL_SCOPES ? [...API_KEY_SCOPES] : check(z.array(ZApiKeyScope).min(1), scopes, 'scopes'),
        stores,
        expiresAt: values.expires === undefined ? undefined : check(ZTimestamp, values.expires, 'expires'),
        mode: values.mode === undefined ? ('live' as const) : check(ZApiKeyMode, values.mode, 'mode'),
      };
    },
    async run(runtime, input) {
      const [{ createApiKey }, { StoreSchema }] = await Promise.all([
        import('./modules/api-keys/api-keys.service.js'),
        import('./modules/stores/stores.entities.js'),
      ]);
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
        mode: input.mode,
      });
      return `created ${apiKey.mode} API key ${apiKey.id} (${apiKey.scopes.join(', ')}); it is shown only now:\n${key}`;
    },
  }),
  'seed-demo': operator({
    summary: 'create a demo store with products, keys, a coupon, orders and an API key',
    options: [],
    example: 'svc seed-demo',
    parse: () => undefined,
    async run(runtime) {
      const { seedDemo } = await import('./seed-demo.js');
      return seedDemo(runtime);
    },
  }),
  'ban-store': operator({
    summary: 'ban a store (its storefront and checkout stop)',
    options: [],
    arguments: [{ name: 'subdomain', description: "the store's subdomain" }],
    example: 'svc ban-store my-shop',
    parse: (_values, [subdomain]) => check(z.string().min(1), subdomain, 'subdomain'),
    async run(runtime, subdomain) {
      const { setStoreBanned } = await import('./modules/stores/stores.service.js');
      const store = await setStoreBanned(context(runtime), { subdomain, banned: true });
      return `banned ${store.subdomain}`;
    },
  }),
  'unban-store': operator({
    summary: 'lift a ban',
    options: [],
    arguments: [{ name: 'subdomain', description: "the store's subdomain" }],
    example: 'svc unban-store my-shop',
    parse: (_values, [subdomain]) => check(z.string().min(1), subdomain, 'subdomain'),
    async run(runtime, subdomain) {
      const { setStoreBanned } = await import('./modules/stores/stores.service.js');
      const store = await setStoreBanned(context(runtime), { subdomain, banned: false });
      return `unbanned ${store.subdomain}`;
    },
  }),
  storage: operator({
    summary: 'copy the uploaded files of DATA_DIR into an object store (then set STORAGE_URL to it)',
    details:
      'Idempotent and resumable: an object the store already holds with the same SHA-256 is not copied again. ' +
      'Every object is read back and its SHA-256 checked; one that differs is named and the command exits 1. ' +
      'The credentials are the AWS variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).',
    options: [
      {
        name: 'to',
        value: 'storage-url',
        description: 's3://<bucket>?endpoint=<url>&region=<region>&forcePathStyle=true',
        required: true,
      },
    ],
    arguments: [{ name: 'action', description: 'copy' }],
    example:
      "svc storage copy --to 's3://svc-files?endpoint=https://s3.example.com&region=eu-west-1&forcePathStyle=true'",
    parse(values, [action]) {
      if (action !== 'copy') throw new UsageError(`unknown action ${action}: the one action is copy`);
      try {
        return parseStorageUrl(values.to!);
      } catch (error) {
        if (error instanceof ConfigError) throw new UsageError(error.message);
        throw error;
      }
    },
    async run(runtime, location) {
      const [{ S3FileStorage }, { copyOutcome, copyToObjectStore }] = await Promise.all([
        import('./lib/s3-storage.js'),
        import('./storage-copy.js'),
      ]);
      const target = new S3FileStorage(location, runtime.deps.log);
      try {
        const report = await copyToObjectStore(runtime.deps.config.fileStorageDir, target, (line) =>
          process.stdout.write(`${line}\n`),
        );
        return copyOutcome(report);
      } finally {
        target.close();
      }
    },
  }),
};

/**
 * The process commands (main.ts runs them): they take no options, their configuration is the
 * environment.
 */
const ENVIRONMENT = 'Configured by the environment (PORT, HOST, DATABASE_URL, REDIS_URL...: README, Configuration).';

export const PROCESS_COMMANDS = {
  serve: defineCommand({
    details: ENVIRONMENT,
    summary: 'serve the HTTP API, deliver webhooks and mail and run the scheduled jobs (the default command)',
    options: [],
    example: 'PORT=3000 DATABASE_URL=postgres://localhost/svc svc serve',
    parse: () => undefined,
  }),
  worker: defineCommand({
    details: ENVIRONMENT,
    summary: 'deliver webhooks and mail only (run any number beside the API processes)',
    options: [],
    example: 'DATABASE_URL=postgres://localhost/svc REDIS_URL=redis://localhost:6379 svc worker',
    parse: () => undefined,
  }),
  migrate: defineCommand({
    details: ENVIRONMENT,
    summary: 'apply pending database migrations and exit',
    options: [],
    example: 'DATABASE_URL=postgres://localhost/svc svc migrate',
    parse: () => undefined,
  }),
} satisfies Record<string, CliCommand<undefined>>;

export type ProcessCommandName = keyof typeof PROCESS_COMMANDS;

/** Every command `svc` knows, in the order `svc --help` lists them. */
export const ALL_COMMANDS: Record<string, CliCommand> = { ...PROCESS_COMMANDS, ...CLI_COMMANDS };
