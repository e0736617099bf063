// A consumer's view of the published package: resolved through its `exports` map and
// type-checked under Node16 and bundler resolution, the way an Expo application uses it (the
// Expo modules stood in for by their declared shapes: they are injected, not imported).
import { type ExpoAuth, type ExpoAuthOptions, type ExpoAuthState, LoginRequiredError, createExpoAuth, useSvcAuth } from "@svc/expo";

declare const WebBrowser: {
  openAuthSessionAsync(url: string, redirectUrl?: string | null, options?: object): Promise<{ type: "cancel" | "dismiss" | "opened" | "locked" } | { type: "success"; url: string }>;
};
declare const SecureStore: {
  getItemAsync(key: string, options?: object): Promise<string | null>;
  setItemAsync(key: string, value: string, options?: object): Promise<void>;
  deleteItemAsync(key: string, options?: object): Promise<void>;
};

const options: ExpoAuthOptions = {
  baseURL: "https://acme.id.example",
  clientId: "app_1",
  redirectUri: "com.example.app:/oauth/callback",
  openAuthSessionAsync: WebBrowser.openAuthSessionAsync,
  secureStore: SecureStore,
  postLogoutRedirectUri: "com.example.app:/bye",
};
export const auth: ExpoAuth = createExpoAuth(options);

export function useWho(): string {
  const state: ExpoAuthState = useSvcAuth(auth);
  return state.status === "signed-in" ? (state.user?.sub ?? "") : state.status;
}

export async function callApi(): Promise<string> {
  try {
    return await auth.getAccessToken();
  } catch (error) {
    if (!(error instanceof LoginRequiredError)) throw error;
    await auth.login({ extraParams: { prompt: "login" } });
    return auth.getAccessToken({ forceRefresh: false });
  }
}
