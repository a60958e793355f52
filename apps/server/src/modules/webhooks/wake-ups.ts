/**
 * A webhook dispatcher's wake-ups: a commit of this process that wrote events wakes it through
 * the ORM's wake hub (events/wake.ts); with Redis, it also publishes after each such commit on the
 * events channel, for the dispatchers of other processes, and subscribes to that channel for
 * theirs. Polling (scheduler.ts) covers a lost message and the no-Redis case.
 */
import type { AppDeps } from '../../deps.js';
import { wakeChannel, wakeHubFor } from '../events/wake.js';

/** The part of a node-redis client the wake-ups use: it publishes, and a duplicate subscribes. */
export interface RedisWakeClient {
  publish(channel: string, message: string): Promise<unknown>;
  duplicate(): RedisWakeSubscriber;
}
export interface RedisWakeSubscriber {
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string, channel: string) => unknown): Promise<unknown>;
  close(): Promise<unknown>;
  destroy(): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

export class DispatcherWakeUps {
  private subscriber: RedisWakeSubscriber | undefined;
  private readonly publish: () => void;

  constructor(
    private readonly deps: AppDeps,
    private readonly redis: RedisWakeClient | undefined,
    private readonly onWake: () => void,
  ) {
    const channel = wakeChannel(deps.config.redisKeyPrefix);
    // One message in flight at a time: commits that land meanwhile share the next one.
    let publishing = false;
    let again = false;
    this.publish = () => {
      if (!this.redis) return;
      if (publishing) {
        again = true;
        return;
      }
      publishing = true;
      this.redis
        .publish(channel, '1')
        .catch((error: unknown) => deps.log.debug({ err: error }, 'webhook wake-up not published'))
        .finally(() => {
          publishing = false;
          if (again) {
            again = false;
            this.publish();
          }
        });
    };
  }

  /** Hears this process's commits, and with Redis publishes them and subscribes to the others'. */
  start(): void {
    const hub = wakeHubFor(this.deps.orm);
    hub.listeners.add(this.onWake);
    if (this.redis) {
      hub.publishers.add(this.publish);
      this.subscribe(this.redis);
    }
  }

  /** Stops hearing this process's commits and publishing them. */
  stop(): void {
    const hub = wakeHubFor(this.deps.orm);
    hub?.listeners.delete(this.onWake);
    hub?.publishers.delete(this.publish);
  }

  /** Ends the subscription to the other processes' wake-ups. */
  async unsubscribe(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber) await subscriber.close().catch(() => subscriber.destroy());
  }

  private subscribe(redis: RedisWakeClient): void {
    const subscriber = redis.duplicate();
    this.subscriber = subscriber;
    subscriber.on('error', (error) => this.deps.log.debug({ err: error }, 'webhook wake-up subscriber error'));
    const channel = wakeChannel(this.deps.config.redisKeyPrefix);
    // Reconnects resubscribe by themselves; until the first connect, polling serves.
    subscriber
      .connect()
      .then(() => (this.subscriber === subscriber ? subscriber.subscribe(channel, this.onWake) : undefined))
      .catch((error: unknown) => this.deps.log.warn({ err: error }, 'webhook wake-ups not subscribed; polling only'));
  }
}
