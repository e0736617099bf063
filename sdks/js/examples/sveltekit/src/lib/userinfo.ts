// svc's UserInfo, called from the server with the session's access token.
import { type ServerMetadata, discover, fetchUserInfo } from "@svc/client";
import type { SvcAccessToken } from "@svc/sveltekit";

let metadata: Promise<ServerMetadata> | undefined;

export async function userinfo(token: SvcAccessToken): Promise<Record<string, unknown>> {
  metadata ??= discover(process.env.SVC_ISSUER ?? "");
  return fetchUserInfo(await metadata, token.accessToken, { expectedSubject: token.user.sub, tokenType: token.tokenType });
}
