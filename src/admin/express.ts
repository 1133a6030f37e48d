// The admin handler as Express middleware: failed attempts counted by req.ip, so 'trust proxy' applies.
import type { Request, RequestHandler } from 'express';
import { type AdminOptions, createAdmin } from './create-admin.js';

/** `app.use(adminMiddleware(options))`, at the application's root: it answers only under `basePath`. */
export function adminMiddleware(options: AdminOptions): RequestHandler {
  const admin = createAdmin({ clientAddress: (req) => (req as Request).ip, ...options });
  return (req, res, next) => {
    admin(req, res).then((handled) => {
      if (!handled) next();
    }, next);
  };
}
