/**
 * Exact sliding-window (sliding log) rate limiting. Redis holds the windows so every
 * API process shares them; one Lua call per hit keeps it to one round trip. When Redis
 * is absent or failing, an in-process log takes over so limits keep holding (per
 * process) and no request fails because of the limiter.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from './logger.js';

export interface RateLimitRule {
  /** Stable name of the budget, part of the key: `checkout.start`, `merchant`. */
  name: string;
  max: number;
  windowMs: number;
  /** Answer 429 with only `{ "error": ... }` on REST (the embed route's documented body). */
  bareBody?: boolean;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the oldest counted request leaves the window. */
  resetMs: number;
}

export interface RateLimitStore {
  hit(key: string, rule: RateLimitRule, nowMs: number): Promise<RateLimitDecision>;
  /** Empties `key`'s window of `rule` (a sign-in that succeeded clears its account's failures). */
  clear(key: string, rule: RateLimitRule): Promise<void>;
}

function decide(
  rule: RateLimitRule,
  allowed: boolean,
  count: number,
  oldestMs: number,
  nowMs: number,
): RateLimitDecision {
  return {
    allowed,
    limit: rule.max,
    remaining: Math.max(0, rule.max - count),
    resetMs: Math.max(0, oldestMs + rule.windowMs - nowMs),
  };
}

/** In-process sliding log: exact for one process. */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly logs = new Map<string, number[]>();
  private hitsSinceSweep = 0;

  hit(key: string, rule: RateLimitRule, nowMs: number): Promise<RateLimitDecision> {
    const fullKey = `${rule.name}:${key}`;
    const windowStart = nowMs - rule.windowMs;
    let log = this.logs.get(fullKey);
    if (!log) {
      log = [];
      this.logs.set(fullKey, log);
    }
    let expired = 0;
    while (expired < log.length && log[expired]! <= windowStart) expired++;
    if (expired > 0) log.splice(0, expired);
    const allowed = log.length < rule.max;
    if (allowed) log.push(nowMs);
    if (++this.hitsSinceSweep >= 10_000) this.sweep(nowMs);
    return Promise.resolve(decide(rule, allowed, log.length, log[0] ?? nowMs, nowMs));
  }

  clear(key: string, rule: RateLimitRule): Promise<void> {
    this.logs.delete(`${rule.name}:${key}`);
    return Promise.resolve();
  }

  /** Drops windows that hold nothing any more, so idle clients cost no memory. */
  private sweep(nowMs: number): void {
    this.hitsSinceSweep = 0;
    for (const [key, log] of this.logs) {
      const last = log[log.length - 1];
      // The longest window we use is an hour; anything older than a day is certainly idle.
      if (last === undefined || last < nowMs - 24 * 3600_000) this.logs.delete(key);
    }
  }
}

/** KEYS[1] window key; ARGV: now ms, window ms, max, unique member. Returns {allowed, count, oldest}. */
const SLIDING_LOG_LUA = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local allowed = 0
if count < max then
  redis.call('ZADD', key, now, ARGV[4])
  count = count + 1
  allowed = 1
end
redis.call('PEXPIRE', key, window)
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local oldestScore = now
if oldest[2] then oldestScore = tonumber(oldest[2]) end
return {allowed, count, oldestScore}
`;

/** The part of a node-redis client the limiter uses: a command as its words (no per-command option parsing). */
export interface RedisScriptRunner {
  sendCommand(args: string[]): Promise<unknown>;
}

const SLIDING_LOG_SHA = createHash('sha1').update(SLIDING_LOG_LUA).digest('hex');

/**
 * A hit's member in the window's sorted set must be unique among every process sharing the Redis:
 * a random tag of this process and a counter (random bytes per hit cost a system call each; they
 * were 2.6 % of the License API's CPU).
 */
const MEMBER_TAG = randomBytes(6).toString('base64url');
let memberSeq = 0;

export class RedisRateLimitStore implements RateLimitStore {
  private readonly deadlines: Deadlines | undefined;

  constructor(
    private readonly redis: RedisScriptRunner,
    private readonly prefix = 'svc:rl:',
    /** A hit that Redis has not answered in this many ms fails (the fallback store then decides); 0: wait. */
    timeoutMs = 0,
  ) {
    this.deadlines = timeoutMs > 0 ? new Deadlines(timeoutMs) : undefined;
  }

  async hit(key: string, rule: RateLimitRule, nowMs: number): Promise<RateLimitDecision> {
    const args = [
      `${this.prefix}${rule.name}:${key}`,
      String(nowMs),
      String(rule.windowMs),
      String(rule.max),
      `${nowMs}:${MEMBER_TAG}${(++memberSeq).toString(36)}`,
    ];
    let reply: unknown;
    try {
      reply = await this.withinDeadline(this.redis.sendCommand(['EVALSHA', SLIDING_LOG_SHA, '1', ...args]));
    } catch (error) {
      // First use on this Redis (or after a restart/flush): load the script by sending it.
      if (!String((error as Error).message).includes('NOSCRIPT')) throw error;
      reply = await this.withinDeadline(this.redis.sendCommand(['EVAL', SLIDING_LOG_LUA, '1', ...args]));
    }
    const [allowed, count, oldest] = reply as [number, number, number];
    return decide(rule, allowed === 1, Number(count), Number(oldest), nowMs);
  }

  async clear(key: string, rule: RateLimitRule): Promise<void> {
    await this.withinDeadline(this.redis.sendCommand(['DEL', `${this.prefix}${rule.name}:${key}`]));
  }

  /**
   * The command's answer, or a failure after the deadline. Our own deadline rather than
   * node-redis's per-command timeout: that one is an AbortSignal.timeout() per command, never
   * cleared, each firing later with a DOMException (3 % of a License API validation's CPU).
   * The offline queue is off (runtime.ts), so a command that times out was sent or failed already.
   */
  private withinDeadline<T>(command: Promise<T>): Promise<T> {
    return this.deadlines ? this.deadlines.watch(command) : command;
  }
}

/**
 * Deadlines for commands that all get the same time, so they expire in the order they were sent:
 * a queue and one timer while anything waits, instead of a timer set and cleared per command.
 * A command fails at most a quarter of the timeout after its deadline.
 */
export class Deadlines {
  private readonly queue: Array<{ at: number; settled: boolean; fail: (error: Error) => void }> = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly timeoutMs: number) {}

  watch<T>(command: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry = { at: Date.now() + this.timeoutMs, settled: false, fail: reject };
      this.queue.push(entry);
      command.then(
        (value) => {
          entry.settled = true;
          resolve(value);
        },
        (error: Error) => {
          entry.settled = true;
          reject(error);
        },
      );
      this.timer ??= setInterval(() => this.sweep(), Math.max(1, Math.floor(this.timeoutMs / 4))).unref();
    });
  }

  private sweep(): void {
    const now = Date.now();
    const queue = this.queue;
    while (this.head < queue.length) {
      const entry = queue[this.head]!;
      if (!entry.settled) {
        if (entry.at > now) break;
        entry.settled = true;
        entry.fail(new Error(`Redis did not answer within ${this.timeoutMs} ms`));
      }
      this.head++;
    }
    if (this.head === queue.length) {
      queue.length = 0;
      this.head = 0;
      clearInterval(this.timer);
      this.timer = undefined;
    } else if (this.head > 1024) {
      queue.splice(0, this.head);
      this.head = 0;
    }
  }
}

/**
 * Redis first, memory when Redis fails. Switches are logged once per change of state,
 * not per request.
 */
export class FallbackRateLimitStore implements RateLimitStore {
  private degraded = false;

  constructor(
    private readonly primary: RateLimitStore | undefined,
    private readonly fallback: RateLimitStore,
    private readonly log: Logger,
  ) {}

  get usingFallback(): boolean {
    return this.degraded || !this.primary;
  }

  async hit(key: string, rule: RateLimitRule, nowMs: number): Promise<RateLimitDecision> {
    if (!this.primary) return this.fallback.hit(key, rule, nowMs);
    try {
      const decision = await this.primary.hit(key, rule, nowMs);
      if (this.degraded) {
        this.degraded = false;
        this.log.warn('rate limiter: Redis answers again; shared windows restored');
      }
      return decision;
    } catch (error) {
      if (!this.degraded) {
        this.degraded = true;
        this.log.error({ err: error }, 'rate limiter: Redis failed; limiting in process until it answers');
      }
      return this.fallback.hit(key, rule, nowMs);
    }
  }

  /** Clears both windows: the one in memory may have counted while Redis was away. */
  async clear(key: string, rule: RateLimitRule): Promise<void> {
    await this.fallback.clear(key, rule);
    if (!this.primary) return;
    try {
      await this.primary.clear(key, rule);
    } catch (error) {
      this.log.warn({ err: error }, 'rate limiter: Redis failed to clear a window');
    }
  }
}
