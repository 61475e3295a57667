package main

// The network: a raft.Transport per node whose calls are the harness's messages. A request
// waits in flight until the scheduler delivers or drops it; delivery hands it to the target's
// consumer channel and waits for the target's answer, which waits in flight in turn until the
// scheduler returns it to the caller or drops it. Pipelining is refused, so every
// AppendEntries is one call with one answer.

import (
	"errors"
	"io"

	"github.com/hashicorp/raft"
)

var (
	errDropped     = errors.New("raftkvs-trace: message dropped")
	errNoSnapshots = errors.New("raftkvs-trace: snapshots are outside the scenario")
)

type transport struct {
	n        *node
	consumer chan raft.RPC // unbuffered: a hand-off completes when the node's main loop takes it
}

// flight is one call in progress: its request, then its answer.
type flight struct {
	req      msgRec
	resp     msgRec
	answered bool
	rpc      interface{} // the library's request
	answer   interface{} // the library's response
	from     *node
	to       string
	outcome  chan error // the scheduler's decision on the answer (nil: returned)
	decided  chan bool  // the scheduler's decision on the request (true: delivered)
}

func (t *transport) Consumer() <-chan raft.RPC                                { return t.consumer }
func (t *transport) LocalAddr() raft.ServerAddress                            { return raft.ServerAddress(t.n.name) }
func (t *transport) EncodePeer(id raft.ServerID, a raft.ServerAddress) []byte { return []byte(a) }
func (t *transport) DecodePeer(b []byte) raft.ServerAddress                   { return raft.ServerAddress(b) }
func (t *transport) SetHeartbeatHandler(func(raft.RPC))                       {}

func (t *transport) AppendEntriesPipeline(raft.ServerID, raft.ServerAddress) (raft.AppendPipeline, error) {
	return nil, raft.ErrPipelineReplicationNotSupported
}

func (t *transport) InstallSnapshot(raft.ServerID, raft.ServerAddress, *raft.InstallSnapshotRequest,
	*raft.InstallSnapshotResponse, io.Reader) error {
	return errNoSnapshots
}

func (t *transport) TimeoutNow(raft.ServerID, raft.ServerAddress, *raft.TimeoutNowRequest, *raft.TimeoutNowResponse) error {
	return errors.New("raftkvs-trace: leadership transfer is outside the scenario")
}

func (t *transport) AppendEntries(id raft.ServerID, target raft.ServerAddress, a *raft.AppendEntriesRequest,
	resp *raft.AppendEntriesResponse) error {
	f := &flight{req: appendRequest(t.n.name, string(target), a), rpc: a, from: t.n, to: string(target)}
	if err := t.n.c.call(f); err != nil {
		return err
	}
	*resp = *f.answer.(*raft.AppendEntriesResponse)
	return nil
}

func (t *transport) RequestVote(id raft.ServerID, target raft.ServerAddress, a *raft.RequestVoteRequest,
	resp *raft.RequestVoteResponse) error {
	f := &flight{req: voteRequest(t.n.name, string(target), a), rpc: a, from: t.n, to: string(target)}
	if err := t.n.c.call(f); err != nil {
		return err
	}
	*resp = *f.answer.(*raft.RequestVoteResponse)
	return nil
}

func entriesOf(logs []*raft.Log) []entryRec {
	out := make([]entryRec, 0, len(logs))
	for _, l := range logs {
		out = append(out, entryOf(l))
	}
	return out
}

func appendRequest(from, to string, a *raft.AppendEntriesRequest) msgRec {
	m := msgRec{Type: "AppendEntriesRequest", From: from, To: to, Term: a.Term, PrevLogIndex: a.PrevLogEntry,
		PrevLogTerm: a.PrevLogTerm, Entries: entriesOf(a.Entries), LeaderCommit: a.LeaderCommitIndex}
	// The heartbeat goroutine's request carries no log position, no entries and no commit
	// index; replication's always has a previous entry or entries (the log starts with the
	// bootstrap configuration).
	m.Heartbeat = a.PrevLogEntry == 0 && len(a.Entries) == 0 && a.LeaderCommitIndex == 0
	return m
}

func appendResponse(req msgRec, r *raft.AppendEntriesResponse) msgRec {
	m := msgRec{Type: "AppendEntriesResponse", From: req.To, To: req.From, Term: r.Term, Entries: []entryRec{},
		Heartbeat: req.Heartbeat, Success: r.Success, LastLog: r.LastLog, ReqTerm: req.Term}
	if n := len(req.Entries); n > 0 {
		m.MatchIndex = req.PrevLogIndex + uint64(n)
	}
	return m
}

func voteRequest(from, to string, a *raft.RequestVoteRequest) msgRec {
	return msgRec{Type: "RequestVoteRequest", From: from, To: to, Term: a.Term, LastLogIndex: a.LastLogIndex,
		LastLogTerm: a.LastLogTerm, Entries: []entryRec{}}
}

func voteResponse(req msgRec, r *raft.RequestVoteResponse) msgRec {
	return msgRec{Type: "RequestVoteResponse", From: req.To, To: req.From, Term: r.Term, Granted: r.Granted,
		Entries: []entryRec{}, ReqTerm: req.Term}
}
