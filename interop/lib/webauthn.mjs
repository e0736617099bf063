// A WebAuthn authenticator for Chromium: the DevTools protocol's virtual authenticator (the
// `WebAuthn` domain), attached to one page. Chromium then answers `navigator.credentials.create`
// and `.get` of that page's tab with it instead of any platform or USB authenticator, with no UI;
// the credentials it holds (private key, RP ID, user handle, signature counter) can be read back
// and removed, so a script sees exactly what the browser registered and used.
import { check } from './common.mjs';

/** The CTAP2 "platform" authenticator of a device with a screen lock (resident keys, UV). */
export const PLATFORM_AUTHENTICATOR = {
  protocol: 'ctap2',
  transport: 'internal',
  hasResidentKey: true,
  hasUserVerification: true,
  isUserVerified: true,
  automaticPresenceSimulation: true,
};

export class VirtualAuthenticator {
  constructor(cdp, id) {
    this.cdp = cdp;
    this.id = id;
  }

  /** Enables the virtual environment in `page`'s tab and adds an authenticator with `options`. */
  static async attach(context, page, options = PLATFORM_AUTHENTICATOR) {
    const cdp = await context.newCDPSession(page);
    // No UI: a request that no authenticator can answer fails at once instead of waiting.
    await cdp.send('WebAuthn.enable', { enableUI: false });
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', { options });
    check(typeof authenticatorId === 'string', 'WebAuthn.addVirtualAuthenticator returned no id');
    return new VirtualAuthenticator(cdp, authenticatorId);
  }

  /** The credentials the authenticator holds (`WebAuthn.Credential`: rpId, userHandle, signCount…). */
  async credentials() {
    const { credentials } = await this.cdp.send('WebAuthn.getCredentials', { authenticatorId: this.id });
    return credentials;
  }

  /**
   * Whether the authenticator answers by itself (`automaticPresenceSimulation`). Off, a pending
   * conditional (autofill) request stays pending, as when a person ignores the autofill.
   */
  async setPresence(enabled) {
    await this.cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId: this.id, enabled });
  }

  /** Forgets every credential (the person lost the device, or removed the passkey from it). */
  async clear() {
    await this.cdp.send('WebAuthn.clearCredentials', { authenticatorId: this.id });
  }

  async detach() {
    await this.cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: this.id }).catch(() => {});
    await this.cdp.detach().catch(() => {});
  }
}

/**
 * Makes `navigator.credentials.create` / `.get` of every page in `context` report on the console
 * when they are called (`[webauthn] get(conditional) called`) and how they end
 * (`[webauthn] get(modal) → public-key|NotAllowedError: …`), and records those lines.
 * The page's own script swallows the error (it shows a generic alert), so this is how a failure
 * names the browser's reason. It wraps, never replaces: the calls and their results are unchanged.
 */
export async function traceWebAuthn(context) {
  const lines = [];
  await context.addInitScript(() => {
    const credentials = navigator.credentials;
    if (!credentials) return;
    for (const name of ['create', 'get']) {
      const original = credentials[name].bind(credentials);
      credentials[name] = (options) => {
        const what = `${name}(${options?.mediation ?? 'modal'})`;
        console.info(`[webauthn] ${what} called`);
        return original(options).then(
          (credential) => {
            console.info(`[webauthn] ${what} → ${credential ? credential.type : 'null'}`);
            return credential;
          },
          (error) => {
            console.info(`[webauthn] ${what} → ${error?.name}: ${error?.message}`);
            throw error;
          },
        );
      };
    }
  });
  context.on('console', (message) => {
    const text = message.text();
    if (text.startsWith('[webauthn] ')) lines.push(text.slice('[webauthn] '.length));
  });
  return lines;
}
