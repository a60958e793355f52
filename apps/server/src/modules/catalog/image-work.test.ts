/** The image queue and the picture checks, without HTTP or a database. */
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { pngClaiming } from '../../../../../test/support/pictures.js';
import { AppError } from '../../lib/errors.js';
import { IMAGE_JOBS, IMAGE_QUEUE, imageWork, MAX_INPUT_PIXELS, pictureSize, withImageTurn } from './image-work.js';

/** A job that runs until `finish()` is called; `started` resolves when it has its turn. */
function heldJob() {
  let finish!: () => void;
  let started!: () => void;
  const startedPromise = new Promise<void>((resolve) => (started = resolve));
  const done = withImageTurn(
    () =>
      new Promise<void>((resolve) => {
        started();
        finish = resolve;
      }),
  );
  return { done, started: startedPromise, finish: () => finish() };
}

describe('withImageTurn', () => {
  it(`runs ${IMAGE_JOBS} jobs at once; the next waits for one to end, in order`, async () => {
    const jobs = Array.from({ length: IMAGE_JOBS + 2 }, () => heldJob());
    await Promise.all(jobs.slice(0, IMAGE_JOBS).map((job) => job.started));
    expect(imageWork()).toEqual({ running: IMAGE_JOBS, waiting: 2 });
    let thirdStarted = false;
    void jobs[IMAGE_JOBS]!.started.then(() => (thirdStarted = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(thirdStarted).toBe(false);

    jobs[0]!.finish();
    await jobs[IMAGE_JOBS]!.started;
    expect(imageWork()).toEqual({ running: IMAGE_JOBS, waiting: 1 });
    for (const job of jobs.slice(1)) {
      await job.started;
      job.finish();
    }
    await Promise.all(jobs.map((job) => job.done));
    expect(imageWork()).toEqual({ running: 0, waiting: 0 });
  });

  it(`refuses with 503 once ${IMAGE_QUEUE} jobs wait, without running it`, async () => {
    const jobs = Array.from({ length: IMAGE_JOBS + IMAGE_QUEUE }, () => heldJob());
    await Promise.all(jobs.slice(0, IMAGE_JOBS).map((job) => job.started));
    let ran = false;
    const refused = await withImageTurn(() => {
      ran = true;
      return Promise.resolve();
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).appCode).toBe('service_unavailable');
    expect(ran).toBe(false);
    for (const job of jobs) {
      await job.started;
      job.finish();
    }
    await Promise.all(jobs.map((job) => job.done));
    expect(imageWork()).toEqual({ running: 0, waiting: 0 });
  });

  it('frees the turn of a job that fails', async () => {
    await expect(withImageTurn(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(imageWork()).toEqual({ running: 0, waiting: 0 });
  });

  it('sets sharp up for a small process: no operation cache, one libvips thread per job', async () => {
    await withImageTurn(() => Promise.resolve());
    expect(sharp.concurrency()).toBe(1);
    expect(sharp.cache()).toMatchObject({ memory: { max: 0 }, items: { max: 0 }, files: { max: 0 } });
  });
});

describe('pictureSize', () => {
  it('reads the size from the header alone and refuses past the pixel cap with 413', async () => {
    expect(MAX_INPUT_PIXELS).toBe(4096 * 4096);
    const small = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#123456' } })
      .png()
      .toBuffer();
    expect(await pictureSize(sharp, small, 'The image')).toEqual({
      width: 30,
      height: 20,
      shownWidth: 30,
      shownHeight: 20,
    });
    await expect(pictureSize(sharp, pngClaiming(4096, 4096), 'The image')).resolves.toMatchObject({ width: 4096 });
    for (const [width, height] of [
      [4097, 4096],
      [6300, 6300],
      [20_000, 20_000],
    ] as const) {
      const refused = await pictureSize(sharp, pngClaiming(width, height), 'The image').catch((e: unknown) => e);
      expect((refused as AppError).appCode, `${width} x ${height}`).toBe('payload_too_large');
    }
  });

  it('answers 415 for bytes that are no picture', async () => {
    const refused = await pictureSize(sharp, Buffer.from('not a picture'), 'The logo').catch((e: unknown) => e);
    expect((refused as AppError).appCode).toBe('unsupported_media_type');
    expect((refused as AppError).message).toMatch(/^The logo could not be read/);
  });
});
