package main

// The coordinator makes the steps of three concurrently running raft nodes atomic and orders
// them. At most one step is open at a time. A step is opened by the scheduler (deliver a
// request, return an answer, drop a message, a client request, a crash, a restart) or by a
// node itself: its first event (a store write or an observed role or leader change made by its
// own timer) or a call its replication goroutines make. Every other node's event waits until
// the open step ends; the step ends when the library has done what the step causes, and the
// canonical state is read then, with nothing else running. Before the scheduler opens a
// step, the state is read again and must equal the state logged last: a change that no step
// explains is a run that cannot be linearized (exit 3, the capture retries).

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

const (
	evStoreLogs   = "StoreLogs"
	evDeleteRange = "DeleteRange"
	evTerm        = "CurrentTerm"
	evVoteTerm    = "LastVoteTerm"
	evVote        = "LastVoteCand"
	evSelfVote    = "LastVoteCand(self)"
	evRole        = "Role"
	evLeader      = "Leader"
)

var debug = os.Getenv("RAFTKVS_TRACE_DEBUG") != ""

type stepKind int

const (
	kindTimer     stepKind = iota // opened by a node's own main goroutine
	kindSend                      // a call made by a node's goroutine
	kindScheduled                 // opened by the scheduler
	kindInit                      // the cluster's bootstrap, before Init is logged
)

type step struct {
	kind      stepKind
	action    string
	node      *node // whose main goroutine's events belong to the step
	args      *args
	fromRole  string
	handoff   bool // a request is being handed to node's consumer
	cancel    chan struct{}
	cancelled bool
	rvSends   int
}

type node struct {
	c        *coord
	name     string
	raft     *raft.Raft
	trans    *transport
	logs     *logStore
	stable   *stableStore
	up       bool
	role     string
	leader   string
	term     uint64
	voteTerm uint64
	voteCand string
	log      []entryRec
	votes    map[string]bool // granted votes returned to this candidate in its current election
}

type coord struct {
	mu      sync.Mutex
	cond    *sync.Cond
	cur     *step
	waiting int // goroutines of the nodes waiting for the open step to end
	nodes   []*node
	byName  map[string]*node
	flights []*flight
	lines   [][]byte
	last    []byte
	counts  map[string]int
	maxTerm uint64
	maxLog  int
}

func newCoord(names []string) *coord {
	c := &coord{byName: map[string]*node{}, counts: map[string]int{}}
	c.cond = sync.NewCond(&c.mu)
	for _, name := range names {
		n := &node{c: c, name: name, role: "Follower", votes: map[string]bool{}}
		n.logs = &logStore{raft.NewInmemStore(), n}
		n.stable = &stableStore{raft.NewInmemStore(), n}
		c.nodes = append(c.nodes, n)
		c.byName[name] = n
	}
	return c
}

func (c *coord) wait() {
	c.waiting++
	c.cond.Wait()
	c.waiting--
}

// mainEvent runs apply (a store write or a note of a role or leader change) as an event of
// n's main goroutine, inside the step it belongs to.
func (c *coord) mainEvent(n *node, kind string, apply func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		s := c.cur
		if s == nil {
			c.cur = &step{kind: kindTimer, node: n, fromRole: n.role}
			break
		}
		if s.kind == kindInit || (s.node == n && s.kind != kindSend && !s.handoff) {
			break
		}
		if s.node == n && s.handoff && !s.cancelled {
			// Either the hand-off has completed and this event is the request's handling,
			// or n's main loop took a timer first and the hand-off cannot complete: a
			// cancel settles which (see deliver).
			s.cancelled = true
			close(s.cancel)
		}
		c.wait()
	}
	s := c.cur
	if s.kind == kindScheduled && kind == evSelfVote {
		fail(3, "%s started an election during the step %s: its timer fired while the step was open", n.name, s.action)
	}
	apply()
	if kind == evSelfVote {
		n.votes = map[string]bool{n.name: true}
	}
	if kind == evRole && n.role == "Candidate" && s.kind == kindScheduled {
		fail(3, "%s became a candidate during the step %s: its timer fired while the step was open", n.name, s.action)
	}
	if s.kind == kindTimer {
		c.timerEvent(s, n, kind)
	}
	c.cond.Broadcast()
}

// timerEvent names a step a node's timer opened, and ends it once complete: an election
// timeout ends with the vote requests to both peers, a leader's lease timeout with its
// return to Follower.
func (c *coord) timerEvent(s *step, n *node, kind string) {
	switch {
	case kind == evSelfVote:
		s.action = "ElectionTimeout"
	case kind == evRole && n.role == "Follower" && s.fromRole == "Leader":
		s.action = "LeaderLeaseTimeout"
		c.end(s)
	case kind == evRole && n.role == "Candidate", kind == evLeader && n.leader == "", kind == evTerm, kind == evVoteTerm:
		// the beginning of an election timeout
	default:
		fail(3, "%s made an event %s (role %s) outside any step the harness knows", n.name, kind, n.role)
	}
}

// call is a request sent by one of f.from's goroutines; it returns when the scheduler has
// decided its fate and, if delivered, its answer's.
func (c *coord) call(f *flight) error {
	c.mu.Lock()
	joined := false
	for {
		if !f.from.up {
			c.mu.Unlock()
			return errDropped
		}
		s := c.cur
		if s == nil {
			break
		}
		if s.kind == kindTimer && s.node == f.from && s.action == "ElectionTimeout" &&
			f.req.Type == "RequestVoteRequest" && f.req.Term == f.from.term {
			joined = true
			break
		}
		c.wait()
	}
	f.decided = make(chan bool, 1)
	f.outcome = make(chan error, 1)
	for _, g := range c.flights {
		if g.msg().key() == f.req.key() {
			fail(3, "two identical messages in flight: %s", f.req.key())
		}
	}
	c.flights = append(c.flights, f)
	if joined {
		s := c.cur
		s.rvSends++
		if s.rvSends == len(c.nodes)-1 {
			c.end(s)
		}
	} else {
		switch {
		case f.req.Type == "RequestVoteRequest":
			fail(3, "%s sent a vote request outside an election timeout", f.from.name)
		case f.req.Heartbeat:
			c.end(&step{kind: kindSend, action: "Heartbeat", node: f.from, args: &args{J: f.to}})
		default:
			c.end(&step{kind: kindSend, action: "AppendEntries", node: f.from, args: &args{J: f.to}})
		}
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	if delivered := <-f.decided; !delivered {
		return errDropped
	}
	return <-f.outcome
}

func (f *flight) msg() msgRec {
	if f.answered {
		return f.resp
	}
	return f.req
}

// snapshot reads the canonical state. Called with the lock held and the open step complete.
func (c *coord) snapshot() *state {
	st := &state{CurrentTerm: map[string]uint64{}, State: map[string]string{}, VotedFor: map[string]string{},
		Leader: map[string]string{}, Log: map[string][]entryRec{}, CommitIndex: map[string]uint64{},
		VotesGranted: map[string]strSet{}, NextIndex: map[string]map[string]uint64{},
		MatchIndex: map[string]map[string]uint64{}, Messages: msgSet{Set: []msgRec{}}}
	for _, n := range c.nodes {
		i := n.name
		st.CurrentTerm[i] = n.term
		st.VotedFor[i] = "none"
		if n.voteTerm == n.term && n.voteCand != "" {
			st.VotedFor[i] = n.voteCand
		}
		st.Log[i] = append([]entryRec{}, n.log...)
		st.Leader[i], st.State[i], st.CommitIndex[i] = "none", "Down", 0
		st.VotesGranted[i] = strSet{[]string{}}
		st.NextIndex[i], st.MatchIndex[i] = map[string]uint64{}, map[string]uint64{}
		for _, j := range c.nodes {
			st.NextIndex[i][j.name], st.MatchIndex[i][j.name] = 0, 0
		}
		if c.maxTerm < n.term {
			c.maxTerm = n.term
		}
		if c.maxLog < len(n.log) {
			c.maxLog = len(n.log)
		}
		if !n.up {
			continue
		}
		st.State[i] = n.role
		if n.leader != "" {
			st.Leader[i] = n.leader
		}
		st.CommitIndex[i] = commitIndexOf(n.raft)
		switch n.role {
		case "Candidate":
			st.VotesGranted[i] = strSet{sortedKeys(n.votes)}
		case "Leader":
			lv := leaderOf(n.raft)
			if !lv.ready {
				fail(3, "%s is Leader but its replication is not set up", i)
			}
			for _, j := range c.nodes {
				if j != n {
					st.NextIndex[i][j.name] = lv.nextIndex[j.name]
				}
				st.MatchIndex[i][j.name] = lv.matchIndex[j.name]
			}
		case "Follower":
		default:
			fail(3, "%s is in role %s", i, n.role)
		}
	}
	for _, f := range c.flights {
		st.Messages.Set = append(st.Messages.Set, f.msg())
	}
	sort.Slice(st.Messages.Set, func(a, b int) bool { return st.Messages.Set[a].key() < st.Messages.Set[b].key() })
	return st
}

// end logs the step with the state it reached and closes it.
func (c *coord) end(s *step) {
	if s.action == "" {
		fail(3, "a step ended before the harness could name it")
	}
	st := c.snapshot()
	text := encode(st)
	if s.kind != kindInit {
		actor := ""
		if s.node != nil {
			actor = s.node.name
		}
		c.lines = append(c.lines, encode(line{Step: len(c.lines) + 1, Action: s.action, Actor: actor, Args: s.args, State: st}))
		c.counts[s.action]++
		if debug {
			fmt.Fprintf(os.Stderr, "%4d %-28s %s %s\n", len(c.lines), s.action, actor, encode(s.args))
		}
	}
	c.last = text
	c.cur = nil
	c.cond.Broadcast()
}

// open waits until no step is open and no node is waiting to open one, checks that nothing
// changed since the last step, and opens s. Returns with the lock held.
func (c *coord) open(s *step) {
	c.mu.Lock()
	for c.cur != nil || c.waiting > 0 {
		c.mu.Unlock()
		time.Sleep(200 * time.Microsecond)
		c.mu.Lock()
	}
	if text := encode(c.snapshot()); string(text) != string(c.last) {
		fail(3, "the state changed outside any step:\n  logged %s\n  now    %s", c.last, text)
	}
	c.cur = s
}

// await polls until done() holds (read with the lock held), or gives up: the library did
// not do what the step causes in time, so the run cannot be linearized.
func (c *coord) await(what string, done func() bool) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		c.mu.Lock()
		ok := done()
		c.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			fail(3, "gave up waiting for %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func (c *coord) endOpen() {
	c.mu.Lock()
	c.end(c.cur)
	c.mu.Unlock()
}

func remove(fs []*flight, f *flight) []*flight {
	for k, g := range fs {
		if g == f {
			return append(fs[:k:k], fs[k+1:]...)
		}
	}
	fail(1, "message not in flight")
	return fs
}

func quote(m msgRec) string { return fmt.Sprintf("%s %s->%s term %d", m.Type, m.From, m.To, m.Term) }
