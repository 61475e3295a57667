package main

// Reading state that hashicorp/raft keeps in unexported fields, without editing the library:
// the commit index (raftState.commitIndex, an atomic), and a leader's per-follower nextIndex
// (followerReplication.nextIndex, an atomic) and match indexes (commitment.matchIndexes, under
// the commitment's own mutex). Only read when the node's own goroutines cannot be writing the
// fields' containers: see coord.snapshot.

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/hashicorp/raft"
)

func field(v reflect.Value, name string) reflect.Value {
	f := v.FieldByName(name)
	if !f.IsValid() {
		fail(1, "hashicorp/raft has no field %s in %s: not the 1.1.2 layout", name, v.Type())
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

func raftValue(r *raft.Raft) reflect.Value { return reflect.ValueOf(r).Elem() }

func commitIndexOf(r *raft.Raft) uint64 {
	f := field(field(raftValue(r), "raftState"), "commitIndex")
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(f.UnsafeAddr())))
}

// leaderView is a leader's replication state: nextIndex per follower, match per voter, the
// commit index its commitment computed, and whether replication is set up (the map exists).
type leaderView struct {
	ready      bool
	nextIndex  map[string]uint64
	matchIndex map[string]uint64
	commitment uint64
	startIndex uint64
}

func leaderOf(r *raft.Raft) leaderView {
	ls := field(raftValue(r), "leaderState")
	view := leaderView{nextIndex: map[string]uint64{}, matchIndex: map[string]uint64{}}
	repl := field(ls, "replState")
	cm := field(ls, "commitment")
	if repl.IsNil() || cm.IsNil() {
		return view
	}
	view.ready = true
	it := repl.MapRange()
	for it.Next() {
		s := it.Value().Elem()
		nf := field(s, "nextIndex")
		view.nextIndex[it.Key().String()] = atomic.LoadUint64((*uint64)(unsafe.Pointer(nf.UnsafeAddr())))
	}
	c := cm.Elem()
	mu := (*sync.Mutex)(unsafe.Pointer(c.UnsafeAddr())) // the embedded mutex is the first field
	mu.Lock()
	defer mu.Unlock()
	mi := field(c, "matchIndexes").MapRange()
	for mi.Next() {
		view.matchIndex[mi.Key().String()] = mi.Value().Uint()
	}
	view.commitment = field(c, "commitIndex").Uint()
	view.startIndex = field(c, "startIndex").Uint()
	return view
}
