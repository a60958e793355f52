/**
 * The WHERE clause of a repository's keyset page, built one way: the list's own conditions with
 * their `?` parameters, then the cursor's position. Only the fragment and its parameters: the
 * statement (and why it is raw) stays in the module's repository.
 */
import type { KeysetPosition } from './cursor.js';

export class KeysetWhere {
  private readonly conditions: string[];
  readonly params: unknown[];

  constructor(condition: string, ...params: unknown[]) {
    this.conditions = [condition];
    this.params = params;
  }

  /** One more condition (`and`), with its parameters in the order of its `?`s. */
  and(condition: string, ...params: unknown[]): this {
    this.conditions.push(condition);
    this.params.push(...params);
    return this;
  }

  /**
   * Rows after the cursor's, newest first: `(<time>, <id>) < <position>`, a row-value comparison
   * exact to the microsecond that the (…, time desc, id desc) indexes serve. No position, no condition.
   */
  before(position: KeysetPosition | undefined, timeColumn: string, idColumn: string): this {
    if (!position) return this;
    return this.and(
      `(${timeColumn}, ${idColumn}) < (timestamptz 'epoch' + (?::bigint) * interval '1 microsecond', ?)`,
      position.us,
      position.id,
    );
  }

  /** The conditions joined by `and`, for after `where`. */
  get sql(): string {
    return this.conditions.join(' and ');
  }
}
