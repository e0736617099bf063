// A consumer's view of the published package: resolved through its `exports` map and
// type-checked under Node16 and bundler resolution, with Svelte's own store types.
import { createSvcClient, type IdTokenClaims } from "@svc/client";
import { type SvcStores, createSvc } from "@svc/svelte";
import { type Readable, derived, get } from "svelte/store";

const client = createSvcClient({ baseURL: "https://acme.id.example", oauth: { clientId: "app_1", redirectUri: "https://app.example/callback" } });
export const svc: SvcStores = createSvc(client, { onSignIn: (result) => history.replaceState(null, "", result.returnTo ?? "/") });

export const name: Readable<string> = derived(svc.user, (user: IdTokenClaims | null) => user?.email ?? user?.sub ?? "");
export async function signInOrCall(): Promise<string | undefined> {
  if (get(svc.error)) return get(svc.error)?.message;
  if (!get(svc.isAuthenticated)) return void (await svc.login({ returnTo: "/" }));
  const token = await svc.getAccessToken({ forceRefresh: get(svc.auth).isLoading });
  await svc.logout({ navigate: false });
  return token;
}
