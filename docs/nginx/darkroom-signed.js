// Darkroom's signed rendition addresses (`darkroom serve --signed-renditions`), checked by
// nginx's njs module, so that nginx answers them from its own cache without asking
// darkroom. The same check as darkroom's own (RenditionSigner in
// Sources/Darkroom/Library/SignedRenditions.swift); docs/server.md has the nginx block that
// loads it, and a test runs that block against a real nginx.
//
// $darkroom_signing_key holds the library's .darkroom/signing.key in hex (docs/server.md
// writes it into a file the block includes): read from nginx's memory, not from a file at
// every request (which cost a sixth of the rate).
import crypto from 'crypto';

const SIGNED = { 'thumbnail': true, 'aspect-thumbnail': true, 'fullscreen': true };

// Whether two strings are equal, in a time that does not depend on where they first differ.
function same(a, b) {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}

// For js_set: "" for a request that carries no signature (darkroom checks its login), or
// when nginx has no key (darkroom checks the signature; the error log says so); "ok" for a
// GET or HEAD of /api/assets/ID/REP that this library signed and that has not expired;
// "bad" for any other. (No pattern is matched: the id, representation, version and expiry
// are all inside the HMAC, so whatever else they hold fails it.)
function check(r) {
  const args = r.args;
  const signature = args.sig;
  if (signature === undefined) return '';
  const key = r.variables.darkroom_signing_key;
  if (!key || key.length !== 64) {
    r.error('darkroom-signed: $darkroom_signing_key is not 64 hex digits (docs/server.md)');
    return '';
  }
  if (r.method !== 'GET' && r.method !== 'HEAD') return 'bad';
  const path = r.uri.split('/');
  if (path.length !== 5 || path[1] !== 'api' || path[2] !== 'assets' || !SIGNED[path[4]]) {
    return 'bad';
  }
  const version = args.v, expires = args.e;
  if (typeof version !== 'string' || typeof expires !== 'string' || typeof signature !== 'string'
    || expires.length > 12 || !(Number(expires) > Date.now() / 1000)) {
    return 'bad';
  }
  const message = 'darkroom-rendition-1\n' + path[3] + '\n' + path[4] + '\n' + version + '\n'
    + expires;
  const code = crypto.createHmac('sha256', Buffer.from(key, 'hex')).update(message).digest();
  return same(code.slice(0, 16).toString('base64url'), signature) ? 'ok' : 'bad';
}

export default { check };
