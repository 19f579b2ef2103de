// Darkroom's signed rendition addresses (`darkroom serve --signed-renditions`), checked by
// nginx's njs module, so that nginx answers them from its own cache without asking
// darkroom. The same check as darkroom's own (RenditionSigner in
// Sources/Darkroom/Library/SignedRenditions.swift); docs/server.md has the nginx block that
// loads it, and a test runs that block against a real nginx.
//
// The variable $darkroom_signing_key names a copy of the library's .darkroom/signing.key
// that nginx's workers may read.
import crypto from 'crypto';
import fs from 'fs';

const SIGNED = { 'thumbnail': true, 'aspect-thumbnail': true, 'fullscreen': true };

// Whether two strings are equal, in a time that does not depend on where they first differ.
function same(a, b) {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}

// For js_set: "" for a request that carries no signature (darkroom checks its login), "ok"
// for a GET or HEAD of /api/assets/ID/REP that this library signed and that has not
// expired, "bad" for any other.
function check(r) {
  const args = r.args;
  if (args.sig === undefined) return '';
  if (r.method !== 'GET' && r.method !== 'HEAD') return 'bad';
  const path = /^\/api\/assets\/([0-9A-Z]{26})\/([a-z-]+)$/.exec(r.uri);
  if (!path || !SIGNED[path[2]]) return 'bad';
  const version = args.v, expires = args.e, signature = args.sig;
  if (typeof version !== 'string' || typeof expires !== 'string' || typeof signature !== 'string') {
    return 'bad';
  }
  if (!/^[0-9]{1,12}$/.test(expires) || Number(expires) <= Date.now() / 1000) return 'bad';
  const key = fs.readFileSync(r.variables.darkroom_signing_key);
  const message = ['darkroom-rendition-1', path[1], path[2], version, expires].join('\n');
  const code = crypto.createHmac('sha256', key).update(message).digest();
  return same(code.slice(0, 16).toString('base64url'), signature) ? 'ok' : 'bad';
}

export default { check };
