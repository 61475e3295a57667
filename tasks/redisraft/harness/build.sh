#!/usr/bin/env bash
# Builds the connect() shim that routes the servers' Raft connections through the harness.
# ovsdb-server itself is Debian's binary, unmodified.
set -euo pipefail
cd "$(dirname "$0")"
for need in ovsdb-server ovsdb-tool ovs-appctl gcc; do
  command -v "$need" >/dev/null || { echo "build.sh: $need is missing (apt-get install openvswitch-common gcc)" >&2; exit 1; }
done
mkdir -p target
gcc -shared -fPIC -O2 -Wall -Werror -o target/netshim.so netshim.c -ldl
