#!/usr/bin/env bash
# The Debian packages the tests use, installed from Debian's archive when missing, so that
# `npm ci && npm test` stays the whole set-up on a fresh machine: openssl issues the certificates of
# the Cloud SQL fake (test/support/cloud-sql-fake.ts); bubblewrap is the CI worker's sandbox;
# busybox-static fills the test image the worker pulls; chromium runs the web interface's browser
# tests (driven by playwright-core). Add a package with the command that proves it is there.
set -euo pipefail

missing=()
command -v openssl >/dev/null || missing+=(openssl)
command -v bwrap >/dev/null || missing+=(bubblewrap)
dpkg -s busybox-static >/dev/null 2>&1 || missing+=(busybox-static)
command -v chromium >/dev/null || missing+=(chromium)
((${#missing[@]} == 0)) && exit 0

if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
  echo "quire: the tests need these packages; install them: ${missing[*]}" >&2
  exit 1
fi
echo "quire: installing ${missing[*]} for the tests" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
