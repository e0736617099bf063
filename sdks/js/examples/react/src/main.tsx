import { createSvcClient } from "@svc/client";
import { SvcProvider } from "@svc/react";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";

// Which issuer and application: read at run time, so one build serves any deployment.
const config: { issuer: string; clientId: string } = await fetch(`${import.meta.env.BASE_URL}config.json`).then((r) => r.json());
const app = new URL(import.meta.env.BASE_URL, location.origin).toString();

// One client for the page's lifetime (not per render).
const client = createSvcClient({
  baseURL: config.issuer,
  oauth: { clientId: config.clientId, redirectUri: `${app}callback`, postLogoutRedirectUri: app },
});

createRoot(document.getElementById("root")!).render(
  // StrictMode runs effects twice in development: the callback must still be completed once.
  <StrictMode>
    <SvcProvider
      client={client}
      onSignIn={(result) => {
        history.replaceState(null, "", result.returnTo ?? app);
        dispatchEvent(new PopStateEvent("popstate"));
      }}
    >
      <App />
    </SvcProvider>
  </StrictMode>,
);
