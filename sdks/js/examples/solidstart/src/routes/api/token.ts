// An API route of the application: svc's UserInfo with the session's access token;
// `?refresh=1` forces a refresh first (the renewed session cookie is written with the answer).
import type { APIEvent } from "@solidjs/start/server";
import { LoginRequiredError, svcLocals } from "@svc/solidstart";
import { userinfo } from "~/lib/svc";

export async function GET(event: APIEvent): Promise<Response> {
  try {
    const token = await svcLocals(event).getAccessToken({ forceRefresh: new URL(event.request.url).searchParams.get("refresh") === "1" });
    const info = await userinfo(token);
    return Response.json({ sub: token.user.sub, token: token.accessToken.slice(-12), email: info.email }, { headers: { "cache-control": "no-store" } });
  } catch (error) {
    if (error instanceof LoginRequiredError) return Response.json({ error: error.code }, { status: 401 });
    throw error;
  }
}
