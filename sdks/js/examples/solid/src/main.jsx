import { createSvcClient } from "@svc/client";
import { SvcProvider } from "@svc/solid";
import { render } from "solid-js/web";
import { App } from "./App.jsx";

// Which issuer and application: read at run time, so one build serves any deployment.
const config = await fetch(`${import.meta.env.BASE_URL}config.json`).then((r) => r.json());
const app = new URL(import.meta.env.BASE_URL, location.origin).toString();

// One client for the page's lifetime.
const client = createSvcClient({
  baseURL: config.issuer,
  oauth: { clientId: config.clientId, redirectUri: `${app}callback`, postLogoutRedirectUri: app },
});

render(
  () => (
    <SvcProvider client={client} onSignIn={(result) => history.replaceState(null, "", result.returnTo ?? app)}>
      <App />
    </SvcProvider>
  ),
  document.getElementById("root"),
);
