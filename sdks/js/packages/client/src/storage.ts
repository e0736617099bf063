// Where the client keeps things. Tokens default to memory (gone on reload; a page's script
// injection cannot read them from localStorage afterwards); only the transient login state
// (state, nonce, code verifier), which must survive the redirect to the sign-in pages, goes to
// sessionStorage (one tab, cleared with it). Anything else is the application's explicit choice.

/** A key-value store; every method may be synchronous or return a promise. */
export interface SvcStorage {
  get(key: string): string | null | undefined | Promise<string | null | undefined>;
  set(key: string, value: string): void | Promise<void>;
  remove(key: string): void | Promise<void>;
}

/** A store in this JavaScript realm's memory: the default for tokens. */
export class MemoryStorage implements SvcStorage {
  private readonly values = new Map<string, string>();
  get(key: string): string | null {
    return this.values.get(key) ?? null;
  }
  set(key: string, value: string): void {
    this.values.set(key, value);
  }
  remove(key: string): void {
    this.values.delete(key);
  }
}

/** The part of the Web Storage interface `webStorage()` uses (declared here so Node typings need no DOM). */
export interface WebStorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** Adapts a Web Storage object (`sessionStorage`, or `localStorage` if you accept the risk). */
export function webStorage(storage: WebStorageLike): SvcStorage {
  return {
    get: (key) => storage.getItem(key),
    set: (key, value) => storage.setItem(key, value),
    remove: (key) => storage.removeItem(key),
  };
}

/** sessionStorage when the page has a usable one (not in Node, not when blocked), else memory. */
export function defaultTransientStorage(): SvcStorage {
  try {
    const storage = (globalThis as { sessionStorage?: WebStorageLike }).sessionStorage;
    if (storage) {
      const probe = "svc:probe";
      storage.setItem(probe, "1");
      storage.removeItem(probe);
      return webStorage(storage);
    }
  } catch {
    // Storage disabled by the browser's settings or a sandboxed frame: memory still works for a popup login.
  }
  return new MemoryStorage();
}
