// Stand-in for next/headers: the request the test set in globalThis.fakeNext. `writable: false`
// behaves like a server component, whose cookie store throws on set() (as Next's does).
const request = () => globalThis.fakeNext;

export async function cookies() {
  const r = request();
  return {
    get: (name) => (r.cookies.has(name) ? { name, value: r.cookies.get(name) } : undefined),
    getAll: () => [...r.cookies].map(([name, value]) => ({ name, value })),
    set(name, value, options) {
      if (!r.writable) throw new Error("Cookies can only be modified in a Server Action or Route Handler.");
      r.sets.push({ name, value, options });
      if (options?.maxAge === 0) r.cookies.delete(name);
      else r.cookies.set(name, value);
    },
  };
}

export async function headers() {
  return new Headers({ host: request().host });
}
