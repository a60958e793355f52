import { ZCreateFeedbackInput, ZFeedback, ZFeedbackList, ZListFeedbackQuery } from '@svc/schemas';
import { publicProcedure, router } from '../../trpc/procedures.js';
import { createFeedback, listFeedback } from './feedback.service.js';

const MINUTE = 60_000;

export const feedbackRouter = router({
  list: publicProcedure
    .meta({
      openapi: { method: 'GET', path: '/feedback', tags: ['public'], summary: "A store's feedback, newest first, with its average rating", protect: false, errorResponses: [400, 403, 404, 500] },
      rateLimit: { name: 'feedback.list', max: 60, windowMs: MINUTE },
    })
    .input(ZListFeedbackQuery)
    .output(ZFeedbackList)
    .query(({ ctx, input }) => listFeedback(ctx, input)),

  create: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/feedback/create', tags: ['buyer'], summary: 'Rate a completed order (once), opened with its checkout token', protect: false, errorResponses: [400, 403, 404, 409, 500] },
      successStatus: 201,
      rateLimit: { name: 'feedback.create', max: 5, windowMs: MINUTE },
    })
    .input(ZCreateFeedbackInput)
    .output(ZFeedback)
    .mutation(({ ctx, input }) => createFeedback(ctx, input)),
});
