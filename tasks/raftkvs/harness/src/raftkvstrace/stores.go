package main

// The harness's LogStore, StableStore, FSM and observer. Each write a node makes goes through
// the coordinator as an event of that node, in the order the node's goroutine makes it.

import (
	"bytes"
	"io"

	"github.com/hashicorp/raft"
)

var (
	keyCurrentTerm  = []byte("CurrentTerm")
	keyLastVoteTerm = []byte("LastVoteTerm")
	keyLastVoteCand = []byte("LastVoteCand")
)

// logStore is raft's InmemStore with every write noted. It outlives a node's crash: a
// restarted node reads the log it persisted.
type logStore struct {
	*raft.InmemStore
	n *node
}

func entryOf(l *raft.Log) entryRec {
	switch l.Type {
	case raft.LogConfiguration:
		return entryRec{l.Term, "config"}
	case raft.LogNoop:
		return entryRec{l.Term, "noop"}
	case raft.LogCommand:
		return entryRec{l.Term, string(l.Data)}
	}
	fail(2, "a log entry of type %v was stored, which this harness does not use", l.Type)
	return entryRec{}
}

func (s *logStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

func (s *logStore) StoreLogs(logs []*raft.Log) error {
	var err error
	s.n.c.mainEvent(s.n, evStoreLogs, func() {
		if err = s.InmemStore.StoreLogs(logs); err != nil {
			return
		}
		for _, l := range logs {
			if l.Index != uint64(len(s.n.log))+1 {
				fail(2, "%s stored entry %d after %d entries: the log has a gap", s.n.name, l.Index, len(s.n.log))
			}
			s.n.log = append(s.n.log, entryOf(l))
		}
	})
	return err
}

func (s *logStore) DeleteRange(min, max uint64) error {
	var err error
	s.n.c.mainEvent(s.n, evDeleteRange, func() {
		if err = s.InmemStore.DeleteRange(min, max); err != nil {
			return
		}
		if max != uint64(len(s.n.log)) || min < 1 || min > max {
			fail(2, "%s deleted entries %d..%d of %d: not a suffix", s.n.name, min, max, len(s.n.log))
		}
		s.n.log = s.n.log[:min-1]
	})
	return err
}

type stableStore struct {
	*raft.InmemStore
	n *node
}

func (s *stableStore) SetUint64(key []byte, val uint64) error {
	var err error
	kind := evTerm
	if bytes.Equal(key, keyLastVoteTerm) {
		kind = evVoteTerm
	} else if !bytes.Equal(key, keyCurrentTerm) {
		fail(2, "%s wrote stable key %q, which this harness does not know", s.n.name, key)
	}
	s.n.c.mainEvent(s.n, kind, func() {
		if err = s.InmemStore.SetUint64(key, val); err != nil {
			return
		}
		if kind == evTerm {
			s.n.term = val
		} else {
			s.n.voteTerm = val
		}
	})
	return err
}

func (s *stableStore) Set(key []byte, val []byte) error {
	if !bytes.Equal(key, keyLastVoteCand) {
		fail(2, "%s wrote stable key %q, which this harness does not know", s.n.name, key)
	}
	var err error
	kind := evVote
	if string(val) == s.n.name {
		kind = evSelfVote
	}
	s.n.c.mainEvent(s.n, kind, func() {
		if err = s.InmemStore.Set(key, val); err == nil {
			s.n.voteCand = string(val)
		}
	})
	return err
}

// kvFSM is the replicated key-value store: every command is a client's Put of its value to
// the one key x. It is not part of the canonical state (the log and the commit index are).
type kvFSM struct {
	kv map[string]string
}

func (f *kvFSM) Apply(l *raft.Log) interface{} {
	f.kv["x"] = string(l.Data)
	return nil
}

func (f *kvFSM) Snapshot() (raft.FSMSnapshot, error) { return nil, errNoSnapshots }

func (f *kvFSM) Restore(io.ReadCloser) error { return errNoSnapshots }

// observe notes role and leader changes as events of the node, in its own goroutine: raft
// calls an observer's filter synchronously inside setState and setLeader.
func (n *node) observe(o *raft.Observation) bool {
	switch d := o.Data.(type) {
	case raft.RaftState:
		n.c.mainEvent(n, evRole, func() { n.role = d.String() })
	case raft.LeaderObservation:
		n.c.mainEvent(n, evLeader, func() { n.leader = string(d.Leader) })
	}
	return false
}
