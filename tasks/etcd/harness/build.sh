#!/bin/sh
# Builds ./etcd-trace offline against the raft package of Debian's golang-etcd-server-dev
# (GOPATH mode: this directory's src/ first, then /usr/share/gocode). Needs golang-go.
set -eu
cd "$(dirname "$0")"
here=$(pwd)
unset GOFLAGS
export GO111MODULE=off GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local GOENV=off
export GOPATH="$here:/usr/share/gocode"
export GOCACHE="$here/.cache/go-build"
if [ ! -d /usr/share/gocode/src/go.etcd.io/etcd/raft ]; then
    echo "build.sh: etcd's raft source is missing: apt-get install -y golang-etcd-server-dev" >&2
    exit 1
fi
# -ldflags=-w: the linkname'd mirror of raft's globalRand (see main.go) does not link with DWARF.
exec go build -ldflags=-w -o etcd-trace etcdtrace
