// What an identifier resolves to, shared by the identity helpers and the gate that counts by it.
/**
 * What an identifier function returns. A falsy value means the request has no identity (a reset connection has
 * no address): it is never unlimited, but counted in the shared `unknown` bucket or refused, per `unidentified`.
 */
export type Identity = string | undefined | null | false;
