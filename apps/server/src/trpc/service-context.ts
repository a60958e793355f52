/** What services need from a request: its EntityManager, the clock and the app's deps. Tests build it without HTTP. */
import type { Context } from './context.js';

export type ServiceContext = Pick<Context, 'em' | 'clock' | 'deps'>;
