package main

// The scheduler's steps, and the seeded policy that picks them.

import (
	"fmt"
	"io"
	"math/rand"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

const (
	heartbeatTimeout = time.Second
	commitTimeout    = 300 * time.Millisecond
)

func config(name string) *raft.Config {
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(name)
	conf.HeartbeatTimeout = heartbeatTimeout
	conf.ElectionTimeout = heartbeatTimeout
	conf.LeaderLeaseTimeout = heartbeatTimeout
	conf.CommitTimeout = commitTimeout
	conf.SnapshotInterval = 24 * time.Hour
	conf.SnapshotThreshold = 1 << 40
	conf.Logger = hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Error})
	return conf
}

// start makes n a running raft node on its persisted stores.
func (c *coord) start(n *node) {
	n.trans = &transport{n: n, consumer: make(chan raft.RPC)}
	n.up = true
	n.role, n.leader, n.votes = "Follower", "", map[string]bool{}
	r, err := raft.NewRaft(config(n.name), &kvFSM{kv: map[string]string{}}, n.logs, n.stable,
		raft.NewDiscardSnapshotStore(), n.trans)
	if err != nil {
		fail(1, "%s: NewRaft: %v", n.name, err)
	}
	r.RegisterObserver(raft.NewObserver(nil, false, n.observe))
	n.raft = r
}

func (c *coord) bootstrap() {
	c.mu.Lock()
	c.cur = &step{kind: kindInit, action: "Init"}
	c.mu.Unlock()
	var servers []raft.Server
	for _, n := range c.nodes {
		servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(n.name),
			Address: raft.ServerAddress(n.name)})
	}
	for _, n := range c.nodes {
		n.trans = &transport{n: n, consumer: make(chan raft.RPC)}
		if err := raft.BootstrapCluster(config(n.name), n.logs, n.stable, raft.NewDiscardSnapshotStore(), n.trans,
			raft.Configuration{Servers: servers}); err != nil {
			fail(1, "%s: bootstrap: %v", n.name, err)
		}
	}
	for _, n := range c.nodes {
		c.start(n)
	}
	c.endOpen()
}

func handler(m msgRec) string {
	switch m.Type {
	case "RequestVoteRequest":
		return "HandleRequestVoteRequest"
	case "RequestVoteResponse":
		return "HandleRequestVoteResponse"
	case "AppendEntriesRequest":
		return "HandleAppendEntriesRequest"
	}
	return "HandleAppendEntriesResponse"
}

// deliver hands a request to its target's main loop and logs the handling, which ends with
// the answer. Returns false if the target's timer came first (nothing is logged; the
// request stays in flight).
func (c *coord) deliver(f *flight) bool {
	n := c.byName[f.to]
	m := f.req
	s := &step{kind: kindScheduled, action: handler(m), node: n, args: &args{M: &m}, handoff: true,
		cancel: make(chan struct{})}
	c.open(s)
	c.flights = remove(c.flights, f)
	c.mu.Unlock()
	answer := make(chan raft.RPCResponse, 1)
	select {
	case n.trans.consumer <- raft.RPC{Command: f.rpc, RespChan: answer}:
	case <-s.cancel:
		c.mu.Lock()
		c.flights = append(c.flights, f)
		c.cur = nil
		c.cond.Broadcast()
		c.mu.Unlock()
		return false
	}
	c.mu.Lock()
	s.handoff = false
	c.cond.Broadcast()
	c.mu.Unlock()
	var r raft.RPCResponse
	select {
	case r = <-answer:
	case <-time.After(3 * time.Second):
		fail(3, "%s did not answer %s", n.name, quote(m))
	}
	if r.Error != nil {
		fail(2, "%s answered %s with an error: %v", n.name, quote(m), r.Error)
	}
	c.mu.Lock()
	f.answer = r.Response
	switch a := r.Response.(type) {
	case *raft.AppendEntriesResponse:
		f.resp = appendResponse(f.req, a)
	case *raft.RequestVoteResponse:
		f.resp = voteResponse(f.req, a)
	}
	f.answered = true
	f.decided <- true
	c.flights = append(c.flights, f)
	c.end(s)
	c.mu.Unlock()
	return true
}

// answer returns an answer to the goroutine that called, and waits for what the library does
// with it: a candidate's vote count may make it Leader (which appends its no-op entry) or a
// newer term may make it Follower; a leader's replication moves nextIndex and matchIndex, and
// its main loop takes up the commit index its commitment computed.
func (c *coord) answer(f *flight) {
	n := f.from
	m := f.resp
	s := &step{kind: kindScheduled, action: handler(m), node: n, args: &args{M: &m}}
	c.open(s)
	c.flights = remove(c.flights, f)
	var wait func() bool
	what := handler(m) + " by " + n.name
	switch {
	case m.Type == "RequestVoteResponse" && n.role == "Candidate" && m.ReqTerm == n.term:
		if m.Term > n.term {
			wait = func() bool { return n.term == m.Term && n.role == "Follower" }
		} else if m.Granted {
			n.votes[m.From] = true
			if len(n.votes)*2 > len(c.nodes) {
				logLen := len(n.log)
				wait = func() bool {
					if n.role != "Leader" || len(n.log) != logLen+1 {
						return false
					}
					return leaderOf(n.raft).matchIndex[n.name] == uint64(logLen+1)
				}
			}
		}
	case m.Type == "AppendEntriesResponse" && !m.Heartbeat && n.role == "Leader" && m.ReqTerm == n.term:
		lv := leaderOf(n.raft)
		next := lv.nextIndex[m.From]
		switch {
		case m.Term > m.ReqTerm:
			wait = func() bool { return n.role == "Follower" }
		case m.Success && m.MatchIndex > 0:
			wait = func() bool {
				v := leaderOf(n.raft)
				return v.nextIndex[m.From] == m.MatchIndex+1 && v.matchIndex[m.From] >= m.MatchIndex &&
					commitIndexOf(n.raft) == v.commitment
			}
		case !m.Success:
			want := next - 1
			if m.LastLog+1 < want {
				want = m.LastLog + 1
			}
			if want < 1 {
				want = 1
			}
			wait = func() bool { return leaderOf(n.raft).nextIndex[m.From] == want }
		}
	}
	c.mu.Unlock()
	f.outcome <- nil
	if wait != nil {
		c.await(what, wait)
	}
	c.endOpen()
}

func (c *coord) drop(f *flight) {
	m := f.msg()
	c.open(&step{kind: kindScheduled, action: "DropMessage", args: &args{M: &m}})
	c.flights = remove(c.flights, f)
	if f.answered {
		f.outcome <- errDropped
	} else {
		f.decided <- false
	}
	c.end(c.cur)
	c.mu.Unlock()
}

func (c *coord) clientRequest(n *node, value string) {
	c.open(&step{kind: kindScheduled, action: "ClientRequest", node: n, args: &args{V: value}})
	logLen := len(n.log)
	c.mu.Unlock()
	go n.raft.Apply([]byte(value), 0)
	c.await("ClientRequest at "+n.name, func() bool {
		return len(n.log) == logLen+1 && leaderOf(n.raft).matchIndex[n.name] == uint64(logLen+1)
	})
	c.endOpen()
}

// crash stops n. What was in flight to it, and the calls its own goroutines had made, are
// lost with it; the answers it had sent stay in flight.
func (c *coord) crash(n *node) {
	c.open(&step{kind: kindScheduled, action: "Crash", node: n})
	n.up = false
	var keep []*flight
	for _, f := range c.flights {
		switch {
		case f.from == n:
			if f.answered {
				f.outcome <- errDropped
			} else {
				f.decided <- false
			}
		case f.to == n.name && !f.answered:
			f.decided <- false
		default:
			keep = append(keep, f)
		}
	}
	c.flights = keep
	c.mu.Unlock()
	if err := n.raft.Shutdown().Error(); err != nil {
		fail(1, "%s: shutdown: %v", n.name, err)
	}
	c.endOpen()
}

func (c *coord) restart(n *node) {
	c.open(&step{kind: kindScheduled, action: "Restart", node: n})
	c.mu.Unlock()
	c.start(n)
	c.endOpen()
}

// run is the seeded scenario: the cluster elects a leader, takes client writes, loses its
// leader to a crash, elects another, and takes the old leader back.
func (c *coord) run(rng *rand.Rand, steps, puts int) {
	downSince := -1
	var down *node
	crashes, written := 0, 0
	idle := time.Now()
	for len(c.lines) < steps {
		c.mu.Lock()
		busy := c.cur != nil || c.waiting > 0
		var leader *node
		for _, n := range c.nodes {
			if n.up && n.role == "Leader" {
				leader = n
			}
		}
		type option struct {
			weight float64
			do     func()
		}
		var opts []option
		for _, f := range c.flights {
			f := f
			switch {
			case f.answered && f.from.up:
				opts = append(opts, option{10, func() { c.answer(f) }}, option{0.2, func() { c.drop(f) }})
			case !f.answered && c.byName[f.to].up:
				opts = append(opts, option{10, func() { c.deliver(f) }}, option{0.2, func() { c.drop(f) }})
			default:
				opts = append(opts, option{10, func() { c.drop(f) }})
			}
		}
		if leader != nil && written < puts {
			value := fmt.Sprintf("v%d", written+1)
			opts = append(opts, option{1.5, func() { c.clientRequest(leader, value); written++ }})
		}
		if leader != nil && down == nil && crashes == 0 && written >= puts/2 {
			// Most likely while the leader holds a write no follower has: the next leader
			// then writes over it, and the old leader's log is cut back when it returns.
			weight := 0.6
			if ahead(leader, c.nodes) {
				weight = 200
			}
			l := leader
			opts = append(opts, option{weight, func() { c.crash(l); down, downSince = l, len(c.lines); crashes++ }})
		}
		if down != nil && len(c.lines)-downSince > 30 {
			d := down
			opts = append(opts, option{4, func() { c.restart(d); down = nil }})
		}
		c.mu.Unlock()
		if busy || len(opts) == 0 {
			if time.Since(idle) > 10*time.Second {
				fail(3, "nothing happened for 10 s")
			}
			time.Sleep(time.Millisecond)
			continue
		}
		idle = time.Now()
		total := 0.0
		for _, o := range opts {
			total += o.weight
		}
		x := rng.Float64() * total
		for _, o := range opts {
			if x -= o.weight; x < 0 {
				o.do()
				break
			}
		}
	}
}

// ahead tells whether the leader's log is longer than every other node's.
func ahead(leader *node, nodes []*node) bool {
	for _, n := range nodes {
		if n != leader && len(n.log) >= len(leader.log) {
			return false
		}
	}
	return true
}
