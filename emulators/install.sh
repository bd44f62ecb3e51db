#!/usr/bin/env bash
# Builds every `tool` of emulators/go.mod into .tools/bin/ of the project (git-ignored).
#
# Idempotent: the build is stamped with a hash of go.mod, go.sum and the project's own Go sources
# (the verifiers in emulators/*/), and skipped while the stamp
# matches and every binary is present, so `npm test` pays for it once (about two minutes cold, well
# under a second after). To add a tool (opa, another emulator), run in emulators/:
#   go get -tool <module/path/to/main>@<version>
# and commit go.mod and go.sum; nothing here needs to change.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
bin="$root/.tools/bin"
stamp="$bin/.go-mod-hash"

# The file name `go install` gives a tool: the last path element, or the one before a /vN suffix.
binary_names() {
  awk '$1 == "tool" && $2 == "(" { block = 1; next }
       block && $1 == ")" { block = 0; next }
       block { print $1; next }
       $1 == "tool" { print $2 }' "$here/go.mod" |
    awk -F/ '{ name = $NF; if (NF > 1 && name ~ /^v[0-9]+$/) name = $(NF - 1); print name }'
}

# The same names on one line, for messages.
names() {
  binary_names | paste -sd' ' -
}

# go.mod, go.sum and every .go file of this folder, in a fixed order.
inputs() {
  cat "$here/go.mod" "$here/go.sum"
  find "$here" -name '*.go' -type f | LC_ALL=C sort | while read -r f; do cat "$f"; done
}

hash_inputs() {
  if command -v sha256sum >/dev/null; then
    inputs | sha256sum | cut -d' ' -f1
  else
    inputs | shasum -a 256 | cut -d' ' -f1
  fi
}

up_to_date() {
  [[ -f "$stamp" && "$(cat "$stamp")" == "$1" ]] || return 1
  local name
  for name in $(binary_names); do
    [[ -x "$bin/$name" ]] || return 1
  done
}

want="$(hash_inputs)"
if up_to_date "$want"; then
  echo "emulators: .tools/bin is up to date ($(names))"
  exit 0
fi

# Go is needed only to build: a checkout with current binaries runs the tests without it.
if ! command -v go >/dev/null; then
  echo "emulators: cannot build $(names): 'go' is not on PATH." >&2
  echo "emulators: install Go 1.24 or newer (https://go.dev/dl/), then run 'npm run emulators'." >&2
  exit 1
fi

echo "emulators: building $(names) into .tools/bin (a minute or two the first time)"
start=$SECONDS
# Build into a fresh folder and swap it in, so an interrupted build never leaves a half-written
# binary that a later run would take as good. -mod=readonly: go.sum must already pin everything.
mkdir -p "$root/.tools"
next="$(mktemp -d "$root/.tools/bin.XXXXXX")"
trap 'rm -rf "$next"' EXIT
chmod 755 "$next"
(cd "$here" && GOBIN="$next" GOFLAGS="-mod=readonly -trimpath" go install tool)
echo "$want" >"$next/.go-mod-hash"
rm -rf "$bin"
mv "$next" "$bin"
echo "emulators: built in $((SECONDS - start))s"
