// One refresh at a time per client: the Web Locks API spans every tab of the origin (so tabs
// sharing a token store never spend the same rotating refresh token twice, which svc would
// treat as reuse and answer by revoking the family); without it (Node, old browsers) a promise
// chain serialises callers within this realm.

const chains = new Map<string, Promise<unknown>>();

interface LockManagerLike {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

function lockManager(): LockManagerLike | undefined {
  const locks = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks;
  return locks && typeof locks.request === "function" ? locks : undefined;
}

/** Runs `task` while holding the lock `name`. */
export function withLock<T>(name: string, task: () => Promise<T>): Promise<T> {
  const locks = lockManager();
  if (locks) return locks.request(name, task);
  const previous = chains.get(name) ?? Promise.resolve();
  const run = previous.then(task, task);
  const tail = run.catch(() => undefined);
  chains.set(name, tail);
  void tail.then(() => {
    if (chains.get(name) === tail) chains.delete(name);
  });
  return run;
}
