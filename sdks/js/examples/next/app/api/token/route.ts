// An API route of the application: calls svc's UserInfo with the session's access token.
// `?refresh=1` forces a refresh first (route handlers may write the renewed session cookie).
import { fetchUserInfo } from "@svc/client";
import { LoginRequiredError, requireAccessToken } from "@svc/next";
import { svc, svcMetadata } from "../../../lib/svc";

export async function GET(request: Request): Promise<Response> {
  const forceRefresh = new URL(request.url).searchParams.get("refresh") === "1";
  try {
    const token = await requireAccessToken(svc, { forceRefresh, onMissing: "throw" });
    const userinfo = await fetchUserInfo(await svcMetadata(), token.accessToken, { expectedSubject: token.user.sub, tokenType: token.tokenType });
    return Response.json({ sub: token.user.sub, token: token.accessToken.slice(-12), email: userinfo.email }, { headers: { "cache-control": "no-store" } });
  } catch (error) {
    if (error instanceof LoginRequiredError) return Response.json({ error: error.code }, { status: 401 });
    throw error;
  }
}
