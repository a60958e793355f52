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

/**
 * The environment every svc process starts with, in the same places as NODE_FLAGS (before `node`:
 * `MALLOC_MMAP_THRESHOLD_=131072 node --max-old-space-size=512 ...`).
 *
 * `MALLOC_MMAP_THRESHOLD_=131072`: glibc's malloc serves every block of 128 KiB or more with its
 * own mapping, given back to the system when it is freed. That is glibc's starting threshold, but
 * by default glibc raises it to the size of each such block freed (up to 32 MiB): the buffers of
 * 0.1-10 MiB that libvips (sharp) allocates for a picture then come from the malloc arenas, one per
 * thread that decoded, and stay there. With 32 image uploads in flight the server peaked at 506 MiB
 * RSS and kept it; with this it peaks at about 270 MiB and is back under 190 MiB once idle
 * (bench/image-memory.mjs, docs/decisions.md). Other allocators (musl, jemalloc) ignore it.
 */
export const PROCESS_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' } as const;
