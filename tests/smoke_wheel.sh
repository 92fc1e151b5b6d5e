#!/usr/bin/env bash
# The built wheel (`make wheel`), installed as a user would: in a fresh venv, on a PATH with no
# Rust toolchain (cargo, rustc), from a folder outside the checkout; then `streamnb train` on a
# few messages, `streamnb classify` one, and `streamnb serve` answering spamd's PING and a CHECK.
# Any failing step exits non-zero. Usage: tests/smoke_wheel.sh dist/streamnb-*.whl
set -euo pipefail

fail() { echo "smoke_wheel: FAILED: $*" >&2; exit 1; }

if [ "${1:-}" != "--inner" ]; then
  [ $# -eq 1 ] || fail "expected one wheel, got $# arguments: $* (run 'make wheel' first)"
  [ -f "$1" ] || fail "no wheel at '$1' (run 'make wheel' first)"
  wheel=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
  # the interpreter the venv is made from, by its real path (a pyenv shim needs its PATH)
  python=$("${PYTHON:-python3}" -c 'import os, sys; print(os.path.realpath(sys.executable))')
  # a clean environment: PATH without ~/.cargo/bin, only pip's and the network's settings kept
  keep=()
  while IFS='=' read -r name _; do
    case "$name" in
      PIP_*|http_proxy|https_proxy|no_proxy|HTTP_PROXY|HTTPS_PROXY|NO_PROXY|SSL_CERT_FILE|SSL_CERT_DIR)
        keep+=("$name=${!name}") ;;
    esac
  done < <(env)
  exec env -i PATH=/usr/bin:/bin HOME="$HOME" LANG=C.UTF-8 "${keep[@]}" \
    /bin/bash "$0" --inner "$wheel" "$python"
fi

wheel=$2
python=$3
work=$(mktemp -d)
server=
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
step() { echo "smoke_wheel: $*"; }

for tool in cargo rustc; do
  if command -v "$tool" >/dev/null 2>&1; then fail "$tool is on PATH ($(command -v "$tool")): not a machine without Rust"; fi
done
step "no cargo or rustc on PATH=$PATH"

step "fresh venv from $python, installing $(basename "$wheel") (binary packages only)"
"$python" -m venv venv
venv/bin/python -m pip install --quiet --only-binary=:all: "$wheel" || fail "pip install of the wheel"
export PATH="$work/venv/bin:$PATH"
for tool in cargo rustc; do
  if command -v "$tool" >/dev/null 2>&1; then fail "$tool came with the install ($(command -v "$tool"))"; fi
done

where=$(python -c 'import streamnb, streamnb._core as core; print(core.__file__)') || fail "import streamnb._core"
case "$where" in
  "$work/venv/"*) step "streamnb._core from the wheel: $where" ;;
  *) fail "streamnb._core imported from $where, not from the venv" ;;
esac
[ "$(command -v streamnb)" = "$work/venv/bin/streamnb" ] || fail "the streamnb command is not the venv's"

# the glibc the wheel's tag promises (manylinux2014: 2.17, manylinux_2_28: 2.28) against the
# newest GLIBC_ symbol version the extension module asks for
case "$(basename "$wheel")" in
  *-manylinux2014_*) promised=2.17 ;;
  *-manylinux_2_*) promised=$(basename "$wheel" | sed 's/.*-manylinux_2_\([0-9]*\)_.*/2.\1/') ;;
  *) fail "$(basename "$wheel") has no manylinux tag" ;;
esac
command -v objdump >/dev/null 2>&1 || fail "objdump (binutils) is needed to read the module's symbol versions"
needed=$(objdump -T "$where" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
[ -n "$needed" ] || fail "no GLIBC_ symbol versions read from $where"
[ "$(printf '%s\n%s\n' "$needed" "$promised" | sort -V | tail -1)" = "$promised" ] \
  || fail "the module needs GLIBC_$needed, newer than the tag's glibc $promised"
step "the module needs glibc $needed at most; the tag promises $promised"
streamnb --version

# a few synthetic messages: a folder of spam, a folder of ham
spam_words=(cheap pills viagra discount offer winner prize casino loan free)
ham_words=(meeting agenda project report lunch review draft schedule notes team)
message() {  # message I SENDER SUBJECT WORDS...
  local i=$1 sender=$2 subject=$3; shift 3
  local words=("$@") body="" k
  for k in 0 1 2 3 4 5 6 7; do body+="${words[$(((i + k) % ${#words[@]}))]} "; done
  printf 'From: %s\nTo: me@example.org\nSubject: %s %d\nDate: Mon, %02d Sep 2002 10:00:00 +0000\nMessage-ID: <%d.%s@x>\n\n%s\nsecond line %d of the body\n' \
    "$sender" "$subject" "$i" $((1 + i % 28)) "$i" "${sender%%@*}" "$body" "$i"
}
mkdir spam ham models
for i in $(seq 1 40); do
  message "$i" deals@offers.example.com "Cheap pills" "${spam_words[@]}" > "spam/$i.eml"
  message "$i" alice@work.example.org "Project meeting" "${ham_words[@]}" > "ham/$i.eml"
done

step "streamnb train"
streamnb train model.snb --spam spam --ham ham || fail "streamnb train"
[ -s model.snb ] || fail "streamnb train wrote no model"

step "streamnb classify"
message 99 deals@offers.example.com "Cheap pills" "${spam_words[@]}" > new-spam.eml
message 99 alice@work.example.org "Project meeting" "${ham_words[@]}" > new-ham.eml
code=0; verdict=$(streamnb classify model.snb < new-spam.eml) || code=$?
echo "  spam message: $verdict (exit $code)"
[ "$code" -eq 0 ] || fail "classify: a spam message got exit code $code (0: spam)"
code=0; verdict=$(streamnb classify model.snb < new-ham.eml) || code=$?
echo "  ham message: $verdict (exit $code)"
[ "$code" -eq 1 ] || fail "classify: a ham message got exit code $code (1: ham)"

step "streamnb serve on 127.0.0.1, a free port"
cp model.snb models/smoke.snb
streamnb serve --models models --host 127.0.0.1 --port 0 --read-only 2> serve.log &
server=$!
port=
for _ in $(seq 1 300); do
  port=$(sed -n 's/^.*streamnb serve\[[0-9]*\] INFO: listening on 127\.0\.0\.1:\([0-9][0-9]*\) .*/\1/p' serve.log | head -1)
  [ -n "$port" ] && break
  kill -0 "$server" 2>/dev/null || { cat serve.log >&2; fail "streamnb serve exited before listening"; }
  sleep 0.1
done
[ -n "$port" ] || { cat serve.log >&2; fail "streamnb serve did not listen within 30 s"; }
step "  listening on port $port"
python - "$port" new-spam.eml <<'EOF' || { cat serve.log >&2; fail "spamd protocol"; }
import socket
import sys

port, message = int(sys.argv[1]), open(sys.argv[2], "rb").read()


def ask(request: bytes) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(request)
        conn.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return answer.decode("ascii", "replace")


pong = ask(b"PING SPAMC/1.5\r\n\r\n")
print("  PING:", pong.strip())
if not pong.startswith("SPAMD/1.5 0 PONG"):
    sys.exit(f"PING answered {pong!r}, not SPAMD/1.5 0 PONG")
check = ask(b"CHECK SPAMC/1.5\r\nContent-length: %d\r\nUser: smoke\r\n\r\n" % len(message) + message)
print("  CHECK:", " | ".join(check.split("\r\n")).strip(" |"))
if not (check.startswith("SPAMD/1.5 0 EX_OK") and "Spam: True" in check):
    sys.exit(f"CHECK of a spam message answered {check!r}")
EOF

step "stopping streamnb serve"
kill -TERM "$server"
code=0; wait "$server" || code=$?
server=
[ "$code" -eq 0 ] || { cat serve.log >&2; fail "streamnb serve exited $code on SIGTERM"; }
grep -q "streamnb serve\[[0-9]*\] INFO: stopped" serve.log || { cat serve.log >&2; fail "streamnb serve did not report stopping"; }
step "passed: the wheel installs and runs without Rust"
