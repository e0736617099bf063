// A consumer's view of the published package: resolved through its `exports` map and
// type-checked under Node16 and bundler resolution, with Vue's own types.
import { createSvcClient } from "@svc/client";
import { type SvcAuth, createSvc, useAuth } from "@svc/vue";
import { type Ref, createApp, defineComponent, h } from "vue";

const client = createSvcClient({ baseURL: "https://acme.id.example", oauth: { clientId: "app_1", redirectUri: "https://app.example/callback" } });
const svc = createSvc(client, { onSignIn: (result) => history.replaceState(null, "", result.returnTo ?? "/") });

const Profile = defineComponent({
  setup() {
    const { isLoading, isAuthenticated, user, error, login, logout, getAccessToken }: SvcAuth = useAuth();
    const loading: Readonly<Ref<boolean>> = isLoading;
    return () =>
      loading.value ? h("p", "…")
      : error.value ? h("p", error.value.message)
      : isAuthenticated.value ? h("button", { onClick: () => void logout() }, user.value?.email ?? user.value?.sub)
      : h("button", { onClick: () => void login({ returnTo: "/" }).then(() => getAccessToken({ forceRefresh: true })) }, "Sign in");
  },
});

export const app = createApp(Profile).use(svc);
export const guard = (): boolean => svc.auth.isAuthenticated.value;
