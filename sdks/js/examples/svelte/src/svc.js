import { createSvcClient } from "@svc/client";
import { createSvc } from "@svc/svelte";

// Which issuer and application: read at run time, so one build serves any deployment.
const config = await fetch(`${import.meta.env.BASE_URL}config.json`).then((r) => r.json());
const app = new URL(import.meta.env.BASE_URL, location.origin).toString();

// The stores, once for the page: every component imports them from here.
export const svc = createSvc(
  createSvcClient({
    baseURL: config.issuer,
    oauth: { clientId: config.clientId, redirectUri: `${app}callback`, postLogoutRedirectUri: app },
  }),
  { onSignIn: (result) => history.replaceState(null, "", result.returnTo ?? app) },
);
