// Stand-in for next/navigation: redirect() throws, as Next's does, with the location.
export class Redirect extends Error {
  constructor(location) {
    super(`redirect to ${location}`);
    this.location = location;
  }
}

export function redirect(location) {
  throw new Redirect(location);
}
