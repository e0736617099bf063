import { createSvcClient } from "@svc/client";
import { createSvc } from "@svc/vue";
import { createApp } from "vue";
import App from "./App.vue";

// Which issuer and application: read at run time, so one build serves any deployment.
const config = await fetch(`${import.meta.env.BASE_URL}config.json`).then((r) => r.json());
const app = new URL(import.meta.env.BASE_URL, location.origin).toString();

const client = createSvcClient({
  baseURL: config.issuer,
  oauth: { clientId: config.clientId, redirectUri: `${app}callback`, postLogoutRedirectUri: app },
});

createApp(App)
  .use(createSvc(client, { onSignIn: (result) => history.replaceState(null, "", result.returnTo ?? app) }))
  .mount("#app");
