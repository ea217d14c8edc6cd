// oidc-provider builds endpoint URLs from the request's Host; the gateway advertises its public address instead
// (GATEWAY_PUBLIC_URL), so metadata and registration answers hold the same URLs whichever address was used to ask.

/** Replaces the request origin with the issuer in every top-level string of an answer body. */
export function toPublicUrls(body: Record<string, unknown>, requestOrigin: string, issuer: string): void {
  if (requestOrigin === issuer) return;
  for (const [key, value] of Object.entries(body)) {
    if (typeof value === 'string' && (value === requestOrigin || value.startsWith(`${requestOrigin}/`))) {
      body[key] = `${issuer}${value.slice(requestOrigin.length)}`;
    }
  }
}
