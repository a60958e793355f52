/** For the black-box sweeps: many calls, a few at a time, each answering the problems it found. */
export async function sweep<T>(items: readonly T[], check: (item: T) => Promise<string[]>, concurrency = 4) {
  const problems: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) problems.push(...(await check(items[next++]!)));
    }),
  );
  return problems;
}
