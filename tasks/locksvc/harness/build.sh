#!/bin/sh
# Builds ./locksvc-trace offline against the etcd server and client of Debian's golang-etcd-server-dev
# (GOPATH mode: this directory's src/ first, then /usr/share/gocode). Needs golang-go.
set -eu
cd "$(dirname "$0")"
here=$(pwd)
unset GOFLAGS
export GO111MODULE=off GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local GOENV=off
export GOPATH="$here:/usr/share/gocode"
export GOCACHE="$here/.cache/go-build"
if [ ! -d /usr/share/gocode/src/go.etcd.io/etcd/embed ]; then
    echo "build.sh: the etcd server source is missing: apt-get install -y golang-etcd-server-dev" >&2
    exit 1
fi
exec go build -o locksvc-trace locksvctrace
