// The pages' data, read on the server through server functions: who is signed in and what svc's
// UserInfo says with the session's access token. No token reaches the browser, only its last
// 12 characters (what the browser test compares).
import { query } from "@solidjs/router";
import { type ServerMetadata, discover, fetchUserInfo } from "@svc/client";
import { type SvcAccessToken, LoginRequiredError, svcLocals } from "@svc/solidstart";
import { getRequestEvent } from "solid-js/web";

let metadata: Promise<ServerMetadata> | undefined;

export async function userinfo(token: SvcAccessToken): Promise<Record<string, unknown>> {
  metadata ??= discover(process.env.SVC_ISSUER ?? "");
  return fetchUserInfo(await metadata, token.accessToken, { expectedSubject: token.user.sub, tokenType: token.tokenType });
}

export const home = query(async () => {
  "use server";
  const svc = svcLocals(getRequestEvent()!);
  if (!svc.user) return { sub: "", email: "", token: "" };
  try {
    const token = await svc.getAccessToken();
    const info = await userinfo(token);
    return { sub: token.user.sub, email: typeof info.email === "string" ? info.email : "", token: token.accessToken.slice(-12) };
  } catch (error) {
    if (error instanceof LoginRequiredError) return { sub: "", email: "", token: "" };
    throw error;
  }
}, "home");

// Reached only with a session (the middleware guards /protected); requireAccessToken() would
// redirect to the login route otherwise.
export const privateData = query(async () => {
  "use server";
  const { user } = await svcLocals(getRequestEvent()!).requireAccessToken();
  return { sub: user.sub };
}, "private");
