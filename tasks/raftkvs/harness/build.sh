#!/bin/sh
# Builds ./raftkvs-trace offline against Debian's golang-github-hashicorp-raft-dev (GOPATH mode:
# this directory's src/ first, then /usr/share/gocode). Needs golang-go.
set -eu
cd "$(dirname "$0")"
here=$(pwd)
unset GOFLAGS
export GO111MODULE=off GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local GOENV=off
export GOPATH="$here:/usr/share/gocode"
export GOCACHE="$here/.cache/go-build"
if [ ! -d /usr/share/gocode/src/github.com/hashicorp/raft ]; then
    echo "build.sh: hashicorp/raft's source is missing: apt-get install -y golang-github-hashicorp-raft-dev" >&2
    exit 1
fi
exec go build -o raftkvs-trace raftkvstrace
