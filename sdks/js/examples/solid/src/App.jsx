import { useAuth } from "@svc/solid";
import { Show, createSignal } from "solid-js";

export function App() {
  const auth = useAuth();
  const [token, setToken] = createSignal("");
  const [email, setEmail] = createSignal("");
  const [calls, setCalls] = createSignal(0);

  async function callUserInfo() {
    setToken((await auth.getAccessToken()).slice(-12));
    // svc binds tokens to the client's DPoP key: the client builds the headers (a proof per request).
    const url = (await auth.client.metadata()).userinfo_endpoint;
    const answer = await fetch(url, { headers: await auth.client.getAuthorizationHeaders("GET", url) });
    setEmail((await answer.json()).email ?? "");
    setCalls((n) => n + 1);
  }

  async function refresh() {
    setToken((await auth.getAccessToken({ forceRefresh: true })).slice(-12));
  }

  // Failures of these actions are also in `auth.error`, which the page shows.
  const quietly = (action) => () => void action().catch(() => undefined);

  return (
    <main>
      <p>
        <span id="status">{auth.isLoading ? "loading" : auth.isAuthenticated ? "signed-in" : "signed-out"}</span>{" "}
        <span id="error">{auth.error ? (auth.error.code ?? auth.error.name) : ""}</span>
      </p>
      <p>
        <span id="sub">{auth.user?.sub ?? ""}</span> <span id="email">{auth.user?.email ?? ""}</span>
      </p>
      <p>
        <span id="token">{token()}</span> <span id="userinfo-email">{email()}</span> <span id="userinfo-calls">{calls()}</span>
      </p>
      <Show
        when={auth.isAuthenticated}
        fallback={
          <button id="login" type="button" disabled={auth.isLoading} onClick={quietly(() => auth.login({ returnTo: "/app/" }))}>
            Sign in
          </button>
        }
      >
        <button id="userinfo" type="button" onClick={quietly(callUserInfo)}>Call UserInfo</button>
        <button id="refresh" type="button" onClick={quietly(refresh)}>Refresh</button>
        <button id="logout" type="button" onClick={quietly(() => auth.logout())}>Sign out</button>
      </Show>
    </main>
  );
}
