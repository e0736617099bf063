// A consumer's view of the published package: resolved through its `exports` map and
// type-checked under Node16 and bundler resolution, the way an Electron main process uses it
// (Electron's own `shell` and `safeStorage` are stood in for by their structural shapes).
import { type ElectronAuth, type ElectronAuthOptions, type SafeStorageLike, LoginRequiredError, createElectronAuth } from "@svc/electron";

declare const shell: { openExternal(url: string, options?: { activate?: boolean }): Promise<void> };
declare const safeStorage: { isEncryptionAvailable(): boolean; encryptString(plainText: string): Buffer; decryptString(encrypted: Buffer): string };

const keychain: SafeStorageLike = safeStorage;
const options: ElectronAuthOptions = {
  baseURL: "https://acme.id.example",
  clientId: "app_1",
  scopes: ["openid", "email", "offline_access"],
  openExternal: (url) => shell.openExternal(url),
  storage: { safeStorage: keychain, path: "/home/ada/.config/app/svc-session.bin" },
  port: 53682,
};
const auth: ElectronAuth = createElectronAuth(options);

export async function callApi(): Promise<string> {
  try {
    const token: string = await auth.getAccessToken();
    return token;
  } catch (error) {
    if (!(error instanceof LoginRequiredError)) throw error;
    const { user, tokens } = await auth.login({ extraParams: { prompt: "login" } });
    await auth.logout({ endSession: true });
    return `${user?.sub} ${tokens.tokenType}`;
  }
}
