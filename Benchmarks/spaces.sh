#!/usr/bin/env bash
# Encrypted spaces, in one run (docs/spaces.md):
#  1. encrypt and decrypt throughput of a 1 GiB set of photos: `darkroom space add` and
#     `darkroom space export` against Debian's age (X25519 recipient; ChaCha20-Poly1305 STREAM)
#     and openssl enc. openssl 3's enc refuses -aes-256-gcm ("AEAD ciphers not supported"), which
#     the script shows; it measures -aes-256-ctr (the same cipher, unauthenticated) instead.
#     darkroom's figures include what age and openssl do not do: reading each header, a keyed
#     hash of the content, padding, fsync of every object and a catalog transaction per file.
#  2. a cold fullscreen render from an encrypted original against the same render from the
#     plaintext file (both --no-cache, whole processes; the space opened with cheap Argon2id
#     parameters, so that the render is what is compared).
#  3. the time to open a space with the standard parameters (Argon2id, 3 passes, 256 MiB),
#     in a folder with one space and in one with eight.
# Usage: Benchmarks/spaces.sh [runs=7]   (SPACES_SKIP_BUILD=1 uses the release build as it is)
source "$(dirname "$0")/common.sh"
RUNS="${1:-7}"
if [ -z "${SPACES_SKIP_BUILD:-}" ]; then
  install_peers
  "$ROOT/Scripts/install-deps.sh" age openssl
  release_build --product darkroom
fi
DARKROOM="$ROOT/.build/release/darkroom"

SRC="$WORK/phone-24mp-o6.jpg"
make_phone_photo "$SRC"
SET="$WORK/space-set"
mkdir -p "$SET"
# Distinct photos: the phone photo with a different trailer after its end, until 1 GiB.
size=$(stat -c %s "$SRC")
count=$(( (1 << 30) / size + 1 ))
for i in $(seq -w 1 "$count"); do
  [ -f "$SET/p$i.jpg" ] || { cat "$SRC"; printf 'darkroom-bench-%s' "$i"; } > "$SET/p$i.jpg"
done
total=$(du -cb "$SET"/*.jpg | tail -n 1 | cut -f1)
echo "set: $count photos, $total bytes ($(vipsheader "$SRC"))"

S="$WORK/spaces"
rm -rf "$S"
mkdir -p "$S"
printf 'bench password\n' > "$S/pw"
mbs() { /usr/bin/python3 -c "import sys; print('%.0f' % (float(sys.argv[1]) / 1048576 / float(sys.argv[2])))" "$1" "$2"; }
seconds() {  # command...: wall seconds of one run
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  /usr/bin/python3 -c "import sys; print('%.3f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$end"
}
sync

# 1. Throughput.
"$DARKROOM" space create "$S/dr" --password-file "$S/pw" >/dev/null
sync
dr_enc=$(seconds "$DARKROOM" space add "$S/dr" "$SET"/*.jpg --password-file "$S/pw")
mkdir -p "$S/dr-out"
sync
dr_dec=$(seconds "$DARKROOM" space export "$S/dr" -o "$S/dr-out" --password-file "$S/pw")
cmp -s "$SET/p$(printf '%0*d' ${#count} 1).jpg" "$S/dr-out/p$(printf '%0*d' ${#count} 1).jpg" \
  || { echo "darkroom export differs from its input" >&2; exit 1; }

age-keygen -o "$S/age.key" 2>/dev/null
pub=$(age-keygen -y "$S/age.key")
mkdir -p "$S/age" "$S/age-out"
# darkroom syncs every object it writes (and every exported file); the peers do not, so their
# runs end with a sync, and every run starts after one: the same durability for all.
age_enc_all() { for f in "$SET"/*.jpg; do age -r "$pub" -o "$S/age/$(basename "$f").age" "$f"; done; sync; }
age_dec_all() { for f in "$S/age"/*.age; do age -d -i "$S/age.key" -o "$S/age-out/$(basename "$f" .age)" "$f"; done; sync; }
sync
age_enc=$(seconds age_enc_all)
sync
age_dec=$(seconds age_dec_all)

{ openssl enc -aes-256-gcm -pbkdf2 -pass pass:x -in "$SRC" -out /dev/null 2>&1 || true; } \
  | head -n 1 | sed 's/^/openssl enc -aes-256-gcm: /'
mkdir -p "$S/ossl" "$S/ossl-out"
ossl_enc_all() { for f in "$SET"/*.jpg; do openssl enc -aes-256-ctr -pbkdf2 -iter 1 -pass pass:x -in "$f" -out "$S/ossl/$(basename "$f").enc"; done; sync; }
ossl_dec_all() { for f in "$S/ossl"/*.enc; do openssl enc -d -aes-256-ctr -pbkdf2 -iter 1 -pass pass:x -in "$f" -out "$S/ossl-out/$(basename "$f" .enc)"; done; sync; }
sync
ossl_enc=$(seconds ossl_enc_all)
sync
ossl_dec=$(seconds ossl_dec_all)

printf '\n%-36s %12s %12s\n' "1 GiB set, MiB/s" "encrypt" "decrypt"
printf '%-36s %12s %12s\n' "darkroom space add / export" "$(mbs "$total" "$dr_enc")" "$(mbs "$total" "$dr_dec")"
printf '%-36s %12s %12s\n' "age (X25519, ChaCha20-Poly1305)" "$(mbs "$total" "$age_enc")" "$(mbs "$total" "$age_dec")"
printf '%-36s %12s %12s\n' "openssl enc -aes-256-ctr" "$(mbs "$total" "$ossl_enc")" "$(mbs "$total" "$ossl_dec")"
echo "darkroom / age: encrypt $(ratio "$age_enc" "$dr_enc")x, decrypt $(ratio "$age_dec" "$dr_dec")x (target: >= 1.00x)"
echo "stored: darkroom $(du -sb "$S/dr/objects" | cut -f1) bytes, age $(du -sb "$S/age" | cut -f1) bytes"

# 2. A cold fullscreen render, encrypted against plaintext.
"$DARKROOM" space create "$S/cheap" --password-file "$S/pw" --kdf-passes 1 --kdf-memory 8 >/dev/null
"$DARKROOM" space add "$S/cheap" "$SRC" --password-file "$S/pw" >/dev/null
hyperfine -N --warmup 2 --runs "$RUNS" --export-json "$WORK/spaces-render.json" \
  "$DARKROOM render $SRC --rep fullscreen --quality 85 --no-cache -o $S/plain.jpg" \
  "$DARKROOM render --space $S/cheap --password-file $S/pw phone-24mp-o6.jpg --rep fullscreen --quality 85 --no-cache -o $S/enc.jpg" \
  >/dev/null 2>&1
read -r plain enc < <(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(" ".join("%.1f" % (x["median"]*1000) for x in r))' "$WORK/spaces-render.json")
cmp -s "$S/plain.jpg" "$S/enc.jpg" && same="identical bytes" || same="DIFFERENT bytes"
printf '\nfullscreen render, median ms: plaintext %s, encrypted %s: %sx (target <= 1.15x; %s)\n' \
  "$plain" "$enc" "$(ratio "$enc" "$plain")" "$same"

# 3. Opening a space (standard Argon2id): one space in the folder, and eight.
for n in 2 3 4 5 6 7 8; do
  printf 'p%s\n' "$n" > "$S/pw$n"
done
keep="$S/keep"
printf 'bench password\n' > "$keep"
for n in 2 3 4 5 6 7 8; do
  "$DARKROOM" space create "$S/dr" --password-file "$S/pw$n" --keep "$keep" >/dev/null
  printf 'p%s\n' "$n" >> "$keep"
done
printf 'nobody\n' > "$S/keep.none"
hyperfine -N -i --warmup 1 --runs "$RUNS" --export-json "$WORK/spaces-open.json" \
  "$DARKROOM space list $S/dr --password-file $S/pw" \
  "$DARKROOM space list $S/dr --password-file $S/pw8" \
  "$DARKROOM space list $S/dr --password-file $S/keep.none" >/dev/null 2>&1
/usr/bin/python3 - "$WORK/spaces-open.json" "$count" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
names = [f"open + list the first space ({sys.argv[2]} assets, 8 spaces)",
         "open + list the eighth space (empty)", "a password that opens nothing"]
print("\nopening (Argon2id 3 passes, 256 MiB), median ms:")
for name, x in zip(names, r):
    print(f"  {name:<52} {x['median']*1000:8.1f}")
EOF
