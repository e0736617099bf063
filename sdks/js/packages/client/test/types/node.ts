// A Node 20 consumer without the DOM library: the declarations must not need browser types.
import { type SvcStorage, createSvcClient, discover, exchangeCode, createAuthorizationUrl, validateCallback } from "@svc/client";

const memory = new Map<string, string>();
const storage: SvcStorage = { get: (k) => memory.get(k), set: (k, v) => void memory.set(k, v), remove: (k) => void memory.delete(k) };

export async function server(callback: string): Promise<string | undefined> {
  const client = createSvcClient({ baseURL: "https://acme.id.example", oauth: { clientId: "app_1", redirectUri: "https://app.example/cb" }, storage, navigate: () => undefined });
  const metadata = await discover("https://acme.id.example");
  const { pending } = await createAuthorizationUrl(metadata, { clientId: "app_1", redirectUri: "https://app.example/cb", scope: "openid" });
  const tokens = await exchangeCode(metadata, validateCallback(metadata, callback, pending.state), pending, { clientId: "app_1" });
  await client.getAccessToken();
  return tokens.idTokenClaims?.sub;
}
