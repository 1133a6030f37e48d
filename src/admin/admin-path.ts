// One reading of request paths for the admin routes and for logs, so a log never shows a path the admin read differently.

/** Where the admin routes live unless `basePath` says otherwise. */
export const DEFAULT_ADMIN_BASE_PATH = '/api/admin';

/**
 * An admin route as a path names it; `identifier` is the segment as sent, still percent-encoded (for unblock, the
 * keyed hash that blocks lists).
 */
export type AdminRoute =
  | { readonly action: 'stats' }
  | { readonly action: 'blocks' }
  | { readonly action: 'reset' | 'bucket' | 'unblock'; readonly identifier: string }
  | { readonly action: 'unknown' };

/** The scheme and authority of an absolute-form request target (`GET http://host/path`). */
const ORIGIN = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;
const UNRESERVED = /^[A-Za-z0-9._~-]$/;

/**
 * The path of a request target as its parts mean it, so that every spelling of one path reads the same: the
 * path of an absolute-form target, without query or fragment; `\` read as `/` (as URL parsers do for http);
 * percent-encoded unreserved characters decoded (`%72eset` is `reset`, `%2e` is `.`) while other escapes stay
 * (an encoded `/` is part of its segment, as Express reads it); empty segments dropped (`//`, a trailing `/`);
 * and `.` and `..` resolved, never above the root.
 */
export function normalizedPath(target: string): string {
  const path = target.replace(ORIGIN, '').split(/[?#]/, 1)[0] as string;
  const segments: string[] = [];
  for (const raw of path.replaceAll('\\', '/').split('/')) {
    const segment = raw.replace(/%([0-9A-Fa-f]{2})/g, (encoded, hex: string) => {
      const char = String.fromCharCode(Number.parseInt(hex, 16));
      return UNRESERVED.test(char) ? char : encoded;
    });
    if (segment === '..') segments.pop();
    else if (segment !== '' && segment !== '.') segments.push(segment);
  }
  return `/${segments.join('/')}`;
}

/** The admin route a request target names, or undefined when its normalised path is not under `basePath`. */
export function adminRoute(target: string, basePath: string): AdminRoute | undefined {
  const path = normalizedPath(target);
  if (path !== basePath && !path.startsWith(`${basePath}/`)) return undefined;
  const [action, identifier, ...rest] = path.slice(basePath.length + 1).split('/');
  if ((action === 'stats' || action === 'blocks') && identifier === undefined) return { action };
  const named = action === 'reset' || action === 'bucket' || action === 'unblock';
  if (named && identifier !== undefined && rest.length === 0) return { action, identifier };
  return { action: 'unknown' };
}

/**
 * What a log may show of a request path that is, or looks, under `basePath`: the admin route's template
 * (`/api/admin/reset/:identifier`, `/api/admin/unblock/:hash`), or `/api/admin/*` for anything else beginning
 * with the base path, compared without case (Express routes that way) in both the normalised and the sent
 * spelling, whoever answered it. Undefined for any other path.
 */
export function loggedAdminPath(target: string, basePath = DEFAULT_ADMIN_BASE_PATH): string | undefined {
  const route = adminRoute(target, basePath);
  if (route?.action === 'stats' || route?.action === 'blocks') return `${basePath}/${route.action}`;
  if (route?.action === 'unblock') return `${basePath}/unblock/:hash`;
  if (route?.action === 'reset' || route?.action === 'bucket')
    return `${basePath}/${route.action}/:identifier`;
  const base = basePath.toLowerCase();
  const spellings = [normalizedPath(target), target.replace(ORIGIN, '')];
  return spellings.some((path) => path.toLowerCase().startsWith(base)) ? `${basePath}/*` : undefined;
}
