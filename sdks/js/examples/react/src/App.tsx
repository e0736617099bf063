import { RequireAuth, useAuth, useSvc } from "@svc/react";
import { useEffect, useState } from "react";

export function App() {
  const { isLoading, isAuthenticated, user, error, login, logout, getAccessToken } = useAuth();
  const svc = useSvc();
  const [token, setToken] = useState("");
  const [email, setEmail] = useState("");
  const [calls, setCalls] = useState(0);
  // A router's smallest form: the path, followed on popstate (main.tsx's onSignIn sends one).
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const follow = () => setPath(location.pathname);
    addEventListener("popstate", follow);
    return () => removeEventListener("popstate", follow);
  }, []);

  async function callUserInfo() {
    setToken((await getAccessToken()).slice(-12));
    // svc binds tokens to the client's DPoP key: the client builds the headers (a proof per request).
    const url = (await svc.metadata()).userinfo_endpoint!;
    const answer = await fetch(url, { headers: await svc.getAuthorizationHeaders("GET", url) });
    setEmail(((await answer.json()) as { email?: string }).email ?? "");
    setCalls((n) => n + 1);
  }

  async function refresh() {
    setToken((await getAccessToken({ forceRefresh: true })).slice(-12));
  }

  // Failures of these actions are also in `error`, which the page shows.
  const quietly = (action: () => Promise<unknown>) => () => void action().catch(() => undefined);

  return (
    <main>
      <p>
        <span id="status">{isLoading ? "loading" : isAuthenticated ? "signed-in" : "signed-out"}</span>{" "}
        <span id="error">{error ? ((error as { code?: string }).code ?? error.name) : ""}</span>
      </p>
      <p>
        <span id="sub">{user?.sub ?? ""}</span> <span id="email">{(user?.email as string | undefined) ?? ""}</span>
      </p>
      <p>
        <span id="token">{token}</span> <span id="userinfo-email">{email}</span> <span id="userinfo-calls">{calls}</span>
      </p>
      {isAuthenticated ? (
        <>
          <button id="userinfo" type="button" onClick={quietly(callUserInfo)}>Call UserInfo</button>
          <button id="refresh" type="button" onClick={quietly(refresh)}>Refresh</button>
          <button id="logout" type="button" onClick={quietly(() => logout())}>Sign out</button>
        </>
      ) : (
        <button id="login" type="button" disabled={isLoading} onClick={quietly(() => login({ returnTo: import.meta.env.BASE_URL }))}>
          Sign in
        </button>
      )}
      {path.endsWith("/private") && (
        <RequireAuth fallback={<p id="guard">Signing in…</p>}>
          <p id="private">Only for {user?.sub}</p>
        </RequireAuth>
      )}
    </main>
  );
}
