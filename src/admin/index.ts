// `tollgate/admin`: the admin endpoints (stats, reset, bucket, blocks, unblock) for node:http and Express applications.
export { loggedAdminPath } from './admin-path.js';
export { bearerTokenCheck, MIN_TOKEN_LENGTH } from './bearer-token.js';
export type { AdminBlock, AdminBlocks } from './blocks.js';
export { type AdminHandler, type AdminOptions, createAdmin } from './create-admin.js';
export { adminMiddleware } from './express.js';
export { type AdminStats, MAX_LISTED_IDENTIFIERS, type ScopeStats } from './stats.js';
