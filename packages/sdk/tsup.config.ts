import { defineConfig } from 'tsup';

export default defineConfig({
  // `.` exports everything; each subpath (package.json "exports") one client and its errors, so
  // a theme or a license check pays only for what it imports (scripts/size.mjs measures each).
  entry: {
    index: 'src/index.ts',
    theme: 'src/subpaths/theme.ts',
    webhooks: 'src/subpaths/webhooks.ts',
    licenses: 'src/subpaths/licenses.ts',
  },
  format: ['esm', 'cjs'],
  // Shared chunks in both formats: a subpath and the root are the same code, so an error thrown
  // by a client from `@svc/sdk/theme` is an instance of `@svc/sdk`'s classes.
  splitting: true,
  dts: true,
  clean: true,
  target: 'es2022',
  platform: 'neutral',
  // The tRPC client (and the parts of @trpc/server it uses) travel inside the bundle, so the
  // package has no dependencies at all and its types name none.
  noExternal: [/^@trpc\//],
  treeshake: true,
});
