#!/usr/bin/env bash
# Compiles the Byteman helper that writes the election's notes; ZooKeeper itself is not rebuilt.
set -euo pipefail
cd "$(dirname "$0")"
for need in /usr/share/java/zookeeper.jar /usr/share/java/byteman.jar; do
  [ -e "$need" ] || { echo "build.sh: $need is missing (apt-get install zookeeper libbyteman-java)" >&2; exit 1; }
done
mkdir -p target
javac -d target --release 17 FleTrace.java
