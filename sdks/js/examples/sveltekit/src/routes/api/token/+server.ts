// An API endpoint of the application: svc's UserInfo with the session's access token;
// `?refresh=1` forces a refresh first (the renewed session cookie is written with the answer).
import { LoginRequiredError } from "@svc/sveltekit";
import { json } from "@sveltejs/kit";
import { userinfo } from "$lib/userinfo";
import type { RequestHandler } from "./$types";

export const GET: RequestHandler = async ({ locals, url }) => {
  try {
    const token = await locals.svc.getAccessToken({ forceRefresh: url.searchParams.get("refresh") === "1" });
    const info = await userinfo(token);
    return json({ sub: token.user.sub, token: token.accessToken.slice(-12), email: info.email }, { headers: { "cache-control": "no-store" } });
  } catch (error) {
    if (error instanceof LoginRequiredError) return json({ error: error.code }, { status: 401 });
    throw error;
  }
};
