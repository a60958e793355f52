import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  target: 'es2022',
  platform: 'neutral',
  // The tRPC client (and the parts of @trpc/server it uses) travel inside the bundle, so the
  // package has no dependencies at all and its types name none.
  noExternal: [/^@trpc\//],
  treeshake: true,
});
