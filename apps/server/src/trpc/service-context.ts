/** What services need from a request: its EntityManager and the clock. Tests build it without HTTP. */
import type { Context } from './context.js';

export type ServiceContext = Pick<Context, 'em' | 'clock'>;
