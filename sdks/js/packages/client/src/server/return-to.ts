// Where to send the browser after sign-in. `returnTo` arrives in a URL anyone can craft
// (`/api/auth/login?returnTo=…`), so only a path on the application's own origin is kept: an
// absolute URL, a scheme-relative `//host`, or a backslash that browsers read as a slash would
// make the login route an open redirect to another site.

/** `value` when it is a same-origin path (`/a/b?c#d`), else `fallback`. */
export function safeReturnTo(value: string | null | undefined, fallback = "/"): string {
  if (!value || value.length > 2048 || !value.startsWith("/")) return fallback;
  // "//evil.example", "/\evil.example" and tabs or newlines that URL parsers strip all leave the origin.
  if (value.startsWith("//") || /[\\\u0000-\u001f\u007f]/.test(value)) return fallback;
  const base = new URL("http://same-origin.invalid");
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return fallback;
  }
  if (url.origin !== base.origin) return fallback;
  return `${url.pathname}${url.search}${url.hash}`;
}
