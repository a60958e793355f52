/**
 * The Node flags every svc process runs with: `npm start`, the `svc` command's own first line and
 * `docs/deploy.md` pass them, the benchmarks start the service with them, and
 * test/node-flags.test.ts holds those places to this list.
 *
 * `--max-old-space-size=512`: a heap limit of 512 MiB (the service lives in 70-150 MiB of heap).
 * With Node's default for this machine (4 GiB) V8 let garbage pile up in the old generation to
 * about 200 MiB before its first full collection under load, and the process peaked at 310 MiB
 * RSS on the orders-list benchmark; with this limit it collects sooner and peaks at 180 MiB, at
 * the same CPU per request (384 MiB cost a fifth more CPU; `--optimize-for-size` three times the
 * CPU). docs/decisions.md (#19) has the runs.
 */
export const NODE_FLAGS = ['--max-old-space-size=512'] as const;
