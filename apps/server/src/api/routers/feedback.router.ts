import { ZCreateFeedbackInput, ZFeedback, ZFeedbackList, ZListFeedbackQuery } from '@svc/schemas';
import { publicProcedure, router } from '../../trpc/procedures.js';
import { createFeedback, listFeedback } from '../../modules/feedback/feedback.service.js';

const MINUTE = 60_000;

export const feedbackRouter = router({
  list: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/feedback',
        tags: ['public'],
        summary: "A store's feedback, newest first, with its average rating",
      },
      rateLimit: { name: 'feedback.list', max: 60, windowMs: MINUTE },
      errors: ['not_found', 'store_banned'],
    })
    .input(ZListFeedbackQuery)
    .output(ZFeedbackList)
    .query(({ ctx, input }) => listFeedback(ctx, input)),

  create: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/feedback/create',
        tags: ['buyer'],
        summary: 'Rate a completed order (once), opened with its checkout token',
      },
      successStatus: 201,
      rateLimit: { name: 'feedback.create', max: 5, windowMs: MINUTE },
      errors: ['not_found', 'store_forbidden', 'order_not_paid', 'conflict'],
    })
    .input(ZCreateFeedbackInput)
    .output(ZFeedback)
    .mutation(({ ctx, input }) => createFeedback(ctx, input)),
});
