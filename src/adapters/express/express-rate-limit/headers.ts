// express-rate-limit's response fields: X-RateLimit-*, the IETF drafts 6, 7 and 8, and Retry-After.
import { createHash } from 'node:crypto';
import type { Response } from 'express';
import type { RateLimitInfo } from './types.js';

/** Seconds until the window ends (never negative), or the whole window when the store gave no end. */
function resetSeconds(windowMs: number, resetTime: Date | undefined): number {
  if (!resetTime) return Math.ceil(windowMs / 1000);
  return Math.max(0, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
}

/** Draft-8's partition key: a short hash of the client key, so the field never shows the key itself. */
function partitionKey(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex').slice(0, 12);
  return Buffer.from(hex).toString('base64');
}

/** `X-RateLimit-Limit/Remaining/Reset`, the reset in epoch seconds beside a `Date` of the same clock. */
export function setLegacyHeaders(res: Response, info: RateLimitInfo): void {
  if (res.headersSent) return;
  res.setHeader('X-RateLimit-Limit', String(info.limit));
  res.setHeader('X-RateLimit-Remaining', String(info.remaining));
  if (!(info.resetTime instanceof Date)) return;
  res.setHeader('Date', new Date().toUTCString());
  res.setHeader('X-RateLimit-Reset', String(Math.ceil(info.resetTime.getTime() / 1000)));
}

export function setDraft6Headers(res: Response, info: RateLimitInfo, windowMs: number): void {
  if (res.headersSent) return;
  res.setHeader('RateLimit-Policy', `${info.limit};w=${Math.ceil(windowMs / 1000)}`);
  res.setHeader('RateLimit-Limit', String(info.limit));
  res.setHeader('RateLimit-Remaining', String(info.remaining));
  res.setHeader('RateLimit-Reset', String(resetSeconds(windowMs, info.resetTime)));
}

export function setDraft7Headers(res: Response, info: RateLimitInfo, windowMs: number): void {
  if (res.headersSent) return;
  const reset = resetSeconds(windowMs, info.resetTime);
  res.setHeader('RateLimit-Policy', `${info.limit};w=${Math.ceil(windowMs / 1000)}`);
  res.setHeader('RateLimit', `limit=${info.limit}, remaining=${info.remaining}, reset=${reset}`);
}

/** Appended, not set: each limiter in front of a route adds its own named policy to the same two fields. */
export function setDraft8Headers(
  res: Response,
  info: RateLimitInfo,
  windowMs: number,
  name: string,
  key: string,
): void {
  if (res.headersSent) return;
  const reset = resetSeconds(windowMs, info.resetTime);
  const policy = `q=${info.limit}; w=${Math.ceil(windowMs / 1000)}; pk=:${partitionKey(String(key))}:`;
  res.append('RateLimit', `"${name}"; r=${info.remaining}; t=${reset}`);
  res.append('RateLimit-Policy', `"${name}"; ${policy}`);
}

/** `retryAfter` (seconds) when given, else the wait until the window ends. */
export function setRetryAfterHeader(
  res: Response,
  info: RateLimitInfo,
  windowMs: number,
  retryAfter: number | undefined,
): void {
  if (res.headersSent) return;
  res.setHeader('Retry-After', String(retryAfter ?? resetSeconds(windowMs, info.resetTime)));
}
