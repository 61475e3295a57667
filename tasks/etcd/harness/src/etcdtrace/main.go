// Command etcd-trace drives three real etcd 3.4 raft.RawNodes in one goroutine over an
// in-memory network and writes the run as an NDJSON trace in the canonical vocabulary of
// tasks/etcd/task.yaml (see README.md next to build.sh).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"go.etcd.io/etcd/raft"
	pb "go.etcd.io/etcd/raft/raftpb"
	"go.etcd.io/etcd/raft/tracker"
)

const (
	harnessVersion = "etcd-trace 1"
	systemVersion  = "go.etcd.io/etcd/raft 3.4.23 (Debian golang-etcd-server-dev)"
	numNodes       = 3
	electionTick   = 10
	heartbeatTick  = 3
)

// ---------------------------------------------------------------------------------------
// Determinism: raft 3.4 draws randomized election timeouts from a package-level generator
// seeded from the clock (raft.go: var globalRand). The mirror below has the same layout as
// raft's unexported lockedRand; the linkname gives this package the same variable, so the
// harness can replace its source with a seeded one before any node is created.

type lockedRand struct {
	mu   sync.Mutex
	rand *rand.Rand
}

//go:linkname etcdGlobalRand go.etcd.io/etcd/raft.globalRand
var etcdGlobalRand *lockedRand

// ---------------------------------------------------------------------------------------
// Errors: any internal inconsistency ends the run with exit status 1 and no trace.

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "etcd-trace: "+format+"\n", args...)
	os.Exit(1)
}

// quietLogger discards raft's debug, info and warning output; errors go to stderr, and
// panics and fatal errors end the run.
type quietLogger struct{}

func (quietLogger) Debug(...interface{})            {}
func (quietLogger) Debugf(string, ...interface{})   {}
func (quietLogger) Info(...interface{})             {}
func (quietLogger) Infof(string, ...interface{})    {}
func (quietLogger) Warning(...interface{})          {}
func (quietLogger) Warningf(string, ...interface{}) {}
func (quietLogger) Error(v ...interface{}) {
	fmt.Fprintln(os.Stderr, append([]interface{}{"raft error:"}, v...)...)
}
func (quietLogger) Errorf(f string, v ...interface{}) {
	fmt.Fprintf(os.Stderr, "raft error: "+f+"\n", v...)
}
func (quietLogger) Fatal(v ...interface{})            { fail("raft fatal: %s", fmt.Sprint(v...)) }
func (quietLogger) Fatalf(f string, v ...interface{}) { fail("raft fatal: "+f, v...) }
func (quietLogger) Panic(v ...interface{})            { panic(fmt.Sprint(v...)) }
func (quietLogger) Panicf(f string, v ...interface{}) { panic(fmt.Sprintf(f, v...)) }

// ---------------------------------------------------------------------------------------
// The canonical vocabulary.

func name(id uint64) string {
	if id == raft.None {
		return "none"
	}
	return fmt.Sprintf("n%d", id)
}

var msgTypeName = map[pb.MessageType]string{
	pb.MsgPreVote:       "MsgPreVote",
	pb.MsgPreVoteResp:   "MsgPreVoteResp",
	pb.MsgVote:          "MsgVote",
	pb.MsgVoteResp:      "MsgVoteResp",
	pb.MsgApp:           "MsgApp",
	pb.MsgAppResp:       "MsgAppResp",
	pb.MsgHeartbeat:     "MsgHeartbeat",
	pb.MsgHeartbeatResp: "MsgHeartbeatResp",
}

var handleAction = map[pb.MessageType]string{
	pb.MsgPreVote:       "HandlePreVoteRequest",
	pb.MsgPreVoteResp:   "HandlePreVoteResponse",
	pb.MsgVote:          "HandleVoteRequest",
	pb.MsgVoteResp:      "HandleVoteResponse",
	pb.MsgApp:           "HandleAppendEntries",
	pb.MsgAppResp:       "HandleAppendEntriesResponse",
	pb.MsgHeartbeat:     "HandleHeartbeat",
	pb.MsgHeartbeatResp: "HandleHeartbeatResponse",
}

var targetActions = []string{
	"ElectionTimeout", "Heartbeat", "ClientProposal",
	"HandlePreVoteRequest", "HandlePreVoteResponse", "HandleVoteRequest", "HandleVoteResponse",
	"HandleAppendEntries", "HandleAppendEntriesResponse", "HandleHeartbeat", "HandleHeartbeatResponse",
	"DropMessage",
}

var roleName = map[raft.StateType]string{
	raft.StateFollower:     "Follower",
	raft.StatePreCandidate: "PreCandidate",
	raft.StateCandidate:    "Candidate",
	raft.StateLeader:       "Leader",
}

// msgRec is a message as the trace writes it: every field of raftpb.Message the vocabulary
// names, with the value the real message has (zero when the type does not set it).
type msgRec struct {
	Type       string   `json:"type"`
	From       string   `json:"from"`
	To         string   `json:"to"`
	Term       uint64   `json:"term"`
	LogTerm    uint64   `json:"logTerm"`
	Index      uint64   `json:"index"`
	Entries    []uint64 `json:"entries"`
	Commit     uint64   `json:"commit"`
	Reject     bool     `json:"reject"`
	RejectHint uint64   `json:"rejectHint"`
}

func record(m pb.Message) msgRec {
	t, ok := msgTypeName[m.Type]
	if !ok {
		fail("node %s sent a %s message, which is outside the vocabulary", name(m.From), m.Type)
	}
	if len(m.Context) != 0 || !raft.IsEmptySnap(m.Snapshot) {
		fail("node %s sent a %s message with a context or snapshot, which the vocabulary does not model", name(m.From), m.Type)
	}
	ents := make([]uint64, len(m.Entries))
	for i, e := range m.Entries {
		if e.Index != m.Index+1+uint64(i) {
			fail("%s from %s carries entry %d at position %d after index %d", t, name(m.From), e.Index, i, m.Index)
		}
		ents[i] = e.Term
	}
	return msgRec{t, name(m.From), name(m.To), m.Term, m.LogTerm, m.Index, ents, m.Commit, m.Reject, m.RejectHint}
}

type strSet struct {
	Set []string `json:"$set"`
}

type msgSet struct {
	Set []msgRec `json:"$set"`
}

// state is the canonical state; the field order is the vocabulary's order.
type state struct {
	CurrentTerm   map[string]uint64            `json:"currentTerm"`
	State         map[string]string            `json:"state"`
	VotedFor      map[string]string            `json:"votedFor"`
	Lead          map[string]string            `json:"lead"`
	Log           map[string][]uint64          `json:"log"`
	CommitIndex   map[string]uint64            `json:"commitIndex"`
	VotesGranted  map[string]strSet            `json:"votesGranted"`
	VotesRejected map[string]strSet            `json:"votesRejected"`
	MatchIndex    map[string]map[string]uint64 `json:"matchIndex"`
	Messages      msgSet                       `json:"messages"`
}

type args struct {
	M msgRec `json:"m"`
}

type line struct {
	Step   int    `json:"step"`
	Action string `json:"action"`
	Actor  string `json:"actor,omitempty"`
	Args   *args  `json:"args,omitempty"`
	State  *state `json:"state"`
}

func encode(v interface{}) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fail("cannot encode JSON: %v", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// ---------------------------------------------------------------------------------------
// Nodes and the network.

type node struct {
	id      uint64
	rn      *raft.RawNode
	storage *raft.MemoryStorage
}

// inflight is one message on the network; key is its record's JSON, which identifies it.
type inflight struct {
	key string
	rec msgRec
	m   pb.Message
}

type harness struct {
	rng      *rand.Rand
	nodes    []*node // index 0 unused
	network  []inflight
	isolated uint64 // the node cut off by the current partition, raft.None if none
	lines    [][]byte
	counts   map[string]int
	steps    int
	limit    int               // the number of steps to log
	leaders  map[uint64]uint64 // term -> the node that was leader in it
	maxTerm  uint64            // the largest term of a node or of a message in any logged state
	maxCur   uint64            // the largest currentTerm in any logged state
	maxLog   int
	stats    struct{ ticks, invisibleTicks, partitions, duplicates, iterations int }
}

func newHarness(seed int64) *harness {
	etcdGlobalRand.mu.Lock()
	etcdGlobalRand.rand = rand.New(rand.NewSource(seed ^ 0x5eed))
	etcdGlobalRand.mu.Unlock()
	raft.SetLogger(quietLogger{})

	h := &harness{
		rng:     rand.New(rand.NewSource(seed)),
		nodes:   make([]*node, numNodes+1),
		counts:  map[string]int{},
		leaders: map[uint64]uint64{},
	}
	peers := make([]raft.Peer, numNodes)
	for i := range peers {
		peers[i] = raft.Peer{ID: uint64(i + 1)}
	}
	for id := uint64(1); id <= numNodes; id++ {
		storage := raft.NewMemoryStorage()
		rn, err := raft.NewRawNode(&raft.Config{
			ID:                        id,
			ElectionTick:              electionTick,
			HeartbeatTick:             heartbeatTick,
			Storage:                   storage,
			MaxSizePerMsg:             math.MaxUint64,
			MaxInflightMsgs:           256,
			CheckQuorum:               false,
			PreVote:                   true,
			DisableProposalForwarding: true,
			Logger:                    quietLogger{},
		})
		if err != nil {
			fail("NewRawNode(%d): %v", id, err)
		}
		if err := rn.Bootstrap(peers); err != nil {
			fail("Bootstrap(%d): %v", id, err)
		}
		n := &node{id: id, rn: rn, storage: storage}
		h.nodes[id] = n
		if sent := h.drain(n); len(sent) != 0 {
			fail("bootstrapping %s sent %d messages", name(id), len(sent))
		}
	}
	return h
}

// drain handles every Ready of n: it persists the HardState and the entries to n's
// MemoryStorage, applies the committed configuration changes, calls Advance, and returns the
// messages to send.
func (h *harness) drain(n *node) []pb.Message {
	var sent []pb.Message
	for n.rn.HasReady() {
		rd := n.rn.Ready()
		if !raft.IsEmptySnap(rd.Snapshot) {
			fail("%s produced a snapshot; the harness never compacts, so none is expected", name(n.id))
		}
		if !raft.IsEmptyHardState(rd.HardState) {
			if err := n.storage.SetHardState(rd.HardState); err != nil {
				fail("%s SetHardState: %v", name(n.id), err)
			}
		}
		if err := n.storage.Append(rd.Entries); err != nil {
			fail("%s Append: %v", name(n.id), err)
		}
		sent = append(sent, rd.Messages...)
		for _, e := range rd.CommittedEntries {
			switch e.Type {
			case pb.EntryConfChange:
				var cc pb.ConfChange
				if err := cc.Unmarshal(e.Data); err != nil {
					fail("%s: bad ConfChange at index %d: %v", name(n.id), e.Index, err)
				}
				n.rn.ApplyConfChange(cc)
			case pb.EntryNormal:
			default:
				fail("%s: unexpected entry type %s at index %d", name(n.id), e.Type, e.Index)
			}
		}
		n.rn.Advance(rd)
	}
	return sent
}

func (h *harness) find(key string) (int, bool) {
	i := sort.Search(len(h.network), func(i int) bool { return h.network[i].key >= key })
	return i, i < len(h.network) && h.network[i].key == key
}

// send puts messages on the network, a set: a message identical to one in flight is lost.
// It returns the messages that were added.
func (h *harness) send(msgs []pb.Message) []inflight {
	var added []inflight
	for _, m := range msgs {
		rec := record(m)
		key := string(encode(rec))
		i, found := h.find(key)
		if found {
			h.stats.duplicates++
			continue
		}
		f := inflight{key, rec, m}
		h.network = append(h.network, inflight{})
		copy(h.network[i+1:], h.network[i:])
		h.network[i] = f
		added = append(added, f)
	}
	return added
}

func (h *harness) remove(i int) inflight {
	f := h.network[i]
	h.network = append(h.network[:i], h.network[i+1:]...)
	return f
}

func (h *harness) cut(f inflight) bool {
	return h.isolated != raft.None && (f.m.From == h.isolated || f.m.To == h.isolated)
}

// ---------------------------------------------------------------------------------------
// Reading the canonical state from the real nodes (read-only).

// votes reads the ProgressTracker's Votes map of n's unexported raft struct.
func votes(n *node) map[uint64]bool {
	r := reflect.ValueOf(n.rn).Elem().FieldByName("raft") // *raft
	if !r.IsValid() || r.Kind() != reflect.Ptr {
		fail("RawNode has no raft pointer field")
	}
	prs := r.Elem().FieldByName("prs")
	if !prs.IsValid() || prs.Type() != reflect.TypeOf(tracker.ProgressTracker{}) {
		fail("raft has no prs field of type tracker.ProgressTracker")
	}
	return (*tracker.ProgressTracker)(unsafe.Pointer(prs.UnsafeAddr())).Votes
}

func (h *harness) read() *state {
	s := &state{
		CurrentTerm:   map[string]uint64{},
		State:         map[string]string{},
		VotedFor:      map[string]string{},
		Lead:          map[string]string{},
		Log:           map[string][]uint64{},
		CommitIndex:   map[string]uint64{},
		VotesGranted:  map[string]strSet{},
		VotesRejected: map[string]strSet{},
		MatchIndex:    map[string]map[string]uint64{},
		Messages:      msgSet{Set: []msgRec{}},
	}
	for id := uint64(1); id <= numNodes; id++ {
		n := h.nodes[id]
		i := name(id)
		if n.rn.HasReady() {
			fail("%s has an undrained Ready", i)
		}
		st := n.rn.Status()
		role, ok := roleName[st.RaftState]
		if !ok {
			fail("%s is in unknown state %v", i, st.RaftState)
		}
		hs, _, err := n.storage.InitialState()
		if err != nil || hs.Term != st.Term || hs.Vote != st.Vote || hs.Commit != st.Commit {
			fail("%s: persisted HardState %+v differs from the node's %+v (%v)", i, hs, st.HardState, err)
		}
		s.CurrentTerm[i] = st.Term
		s.State[i] = role
		s.VotedFor[i] = name(st.Vote)
		s.Lead[i] = name(st.Lead)
		s.CommitIndex[i] = st.Commit

		first, _ := n.storage.FirstIndex()
		last, _ := n.storage.LastIndex()
		if first != 1 {
			fail("%s: storage starts at index %d, not 1", i, first)
		}
		log := make([]uint64, 0, last)
		for k := uint64(1); k <= last; k++ {
			t, err := n.storage.Term(k)
			if err != nil {
				fail("%s: Term(%d): %v", i, k, err)
			}
			log = append(log, t)
		}
		s.Log[i] = log
		if st.Commit > last {
			fail("%s: commit index %d beyond its last index %d", i, st.Commit, last)
		}

		granted, rejected := []string{}, []string{}
		for voter, v := range votes(n) {
			if v {
				granted = append(granted, name(voter))
			} else {
				rejected = append(rejected, name(voter))
			}
		}
		sort.Strings(granted)
		sort.Strings(rejected)
		switch st.RaftState {
		case raft.StateFollower, raft.StateLeader:
			if len(granted)+len(rejected) != 0 {
				fail("%s is %s but its tracker holds votes %v/%v", i, role, granted, rejected)
			}
		default:
			if v, ok := votes(n)[id]; !ok || !v {
				fail("%s is %s without its own vote", i, role)
			}
		}
		s.VotesGranted[i] = strSet{granted}
		s.VotesRejected[i] = strSet{rejected}

		match := map[string]uint64{}
		for j := uint64(1); j <= numNodes; j++ {
			match[name(j)] = 0
			if st.RaftState == raft.StateLeader && j != id {
				pr, ok := st.Progress[j]
				if !ok {
					fail("leader %s has no progress for %s", i, name(j))
				}
				match[name(j)] = pr.Match
			}
		}
		s.MatchIndex[i] = match

		if st.RaftState == raft.StateLeader {
			if l, ok := h.leaders[st.Term]; ok && l != id {
				fail("two leaders in term %d: %s and %s", st.Term, name(l), i)
			}
			h.leaders[st.Term] = id
			if st.Lead != id {
				fail("leader %s names %s as leader", i, name(st.Lead))
			}
		}
		if st.Term > h.maxTerm {
			h.maxTerm = st.Term
		}
		if st.Term > h.maxCur {
			h.maxCur = st.Term
		}
		if len(log) > h.maxLog {
			h.maxLog = len(log)
		}
	}
	// Committed prefixes agree (State Machine Safety as far as the logs show it).
	for a := 1; a <= numNodes; a++ {
		for b := a + 1; b <= numNodes; b++ {
			la, lb := s.Log[name(uint64(a))], s.Log[name(uint64(b))]
			c := s.CommitIndex[name(uint64(a))]
			if cb := s.CommitIndex[name(uint64(b))]; cb < c {
				c = cb
			}
			for k := uint64(0); k < c; k++ {
				if la[k] != lb[k] {
					fail("n%d and n%d disagree on committed entry %d", a, b, k+1)
				}
			}
		}
	}
	for _, f := range h.network {
		s.Messages.Set = append(s.Messages.Set, f.rec)
		if f.rec.Term > h.maxTerm {
			h.maxTerm = f.rec.Term
		}
	}
	return s
}

// ---------------------------------------------------------------------------------------
// Steps. Each logged step appends one line with the canonical state after it.

func (h *harness) log(action, actor string, m *msgRec) {
	h.steps++
	l := line{Step: h.steps, Action: action, Actor: actor, State: h.read()}
	if m != nil {
		l.Args = &args{M: *m}
	}
	h.lines = append(h.lines, encode(l))
	h.counts[action]++
}

// dropCut logs a DropMessage for every in-flight message to or from the isolated node.
func (h *harness) dropCut() {
	for i := 0; i < len(h.network) && h.steps < h.limit; {
		if h.cut(h.network[i]) {
			f := h.remove(i)
			h.log("DropMessage", "", &f.rec)
			continue
		}
		i++
	}
}

func (h *harness) tick(n *node) {
	before := encode(h.read())
	wasLeader := n.rn.Status().RaftState == raft.StateLeader
	n.rn.Tick()
	sent := h.drain(n)
	h.stats.ticks++
	kinds := map[pb.MessageType]int{}
	for _, m := range sent {
		kinds[m.Type]++
	}
	role := n.rn.Status().RaftState
	switch {
	case kinds[pb.MsgPreVote] > 0:
		if wasLeader || role != raft.StatePreCandidate || kinds[pb.MsgPreVote] != len(sent) || len(sent) != numNodes-1 {
			fail("tick of %s: unexpected election timeout (leader before: %v, now %v, sent %v)", name(n.id), wasLeader, role, kinds)
		}
		h.send(sent)
		h.log("ElectionTimeout", name(n.id), nil)
	case kinds[pb.MsgHeartbeat] > 0:
		if !wasLeader || role != raft.StateLeader || kinds[pb.MsgHeartbeat] != len(sent) || len(sent) != numNodes-1 {
			fail("tick of %s: unexpected heartbeat (leader before: %v, now %v, sent %v)", name(n.id), wasLeader, role, kinds)
		}
		h.send(sent)
		h.log("Heartbeat", name(n.id), nil)
	default:
		if len(sent) != 0 || !bytes.Equal(before, encode(h.read())) {
			fail("tick of %s changed the canonical state or sent %v without a timeout", name(n.id), kinds)
		}
		h.stats.invisibleTicks++
		return
	}
	h.dropCut()
}

func (h *harness) propose(n *node) {
	if n.rn.Status().RaftState != raft.StateLeader {
		fail("proposal on non-leader %s", name(n.id))
	}
	if err := n.rn.Propose([]byte("v")); err != nil {
		fail("leader %s refused a proposal: %v", name(n.id), err)
	}
	h.send(h.drain(n))
	h.log("ClientProposal", name(n.id), nil)
	h.dropCut()
}

func (h *harness) deliver(i int) {
	f := h.remove(i)
	if h.cut(f) {
		fail("delivering %s across the partition", f.key)
	}
	n := h.nodes[f.m.To]
	if err := n.rn.Step(f.m); err != nil {
		fail("%s could not step %s: %v", name(n.id), f.key, err)
	}
	h.send(h.drain(n))
	h.log(handleAction[f.m.Type], name(n.id), &f.rec)
	h.dropCut()
}

func (h *harness) drop(i int) {
	f := h.remove(i)
	h.log("DropMessage", "", &f.rec)
}

func (h *harness) currentLeaders() []*node {
	var ls []*node
	for id := uint64(1); id <= numNodes; id++ {
		if h.nodes[id].rn.Status().RaftState == raft.StateLeader {
			ls = append(ls, h.nodes[id])
		}
	}
	return ls
}

// Scheduler weights, per mille of the scheduler's iterations.
const (
	wTick      = 650
	wPropose   = 15
	wDrop      = 30
	pPartition = 16 // per mille, when no partition is active
)

func (h *harness) run(steps int) {
	h.limit = steps
	partitionLeft := 0
	maxIterations := steps * 100
	for h.steps < steps {
		h.stats.iterations++
		if h.stats.iterations > maxIterations {
			fail("no progress: %d iterations for %d steps", h.stats.iterations, h.steps)
		}
		if h.isolated != raft.None {
			partitionLeft--
			if partitionLeft <= 0 {
				h.isolated = raft.None
			}
		} else if len(h.leaders) > 0 && h.rng.Intn(1000) < pPartition {
			// Two thirds of the partitions cut off a leader (if there is one), the others a random node.
			h.isolated = uint64(1 + h.rng.Intn(numNodes))
			if ls := h.currentLeaders(); len(ls) > 0 && h.rng.Intn(3) != 0 {
				h.isolated = ls[h.rng.Intn(len(ls))].id
			}
			partitionLeft = 60 + h.rng.Intn(110)
			h.stats.partitions++
			h.dropCut()
			continue
		}
		r := h.rng.Intn(1000)
		switch {
		case r < wTick || len(h.network) == 0 && r >= wTick+wPropose:
			h.tick(h.nodes[1+h.rng.Intn(numNodes)])
		case r < wTick+wPropose:
			if ls := h.currentLeaders(); len(ls) > 0 {
				h.propose(ls[h.rng.Intn(len(ls))])
			}
		case r < wTick+wPropose+wDrop:
			h.drop(h.rng.Intn(len(h.network)))
		default:
			h.deliver(h.rng.Intn(len(h.network)))
		}
	}
	if h.steps != steps {
		fail("logged %d steps instead of %d", h.steps, steps)
	}
}

// ---------------------------------------------------------------------------------------

const ordering = "One goroutine drives three real RawNodes; every step (a tick, a proposal on a leader, a " +
	"delivery of one in-flight message, or a drop) is applied, the Ready of the stepped node is drained (HardState " +
	"and entries persisted to its MemoryStorage, committed entries applied, Advance) and its messages are put on " +
	"the network, a set. The state after each step is read from the nodes. Ticks that are neither an election nor " +
	"a heartbeat timeout change no canonical variable and are not logged. During a partition every message to or " +
	"from the isolated node is dropped (logged as DropMessage) right after the step that sent it. A seeded " +
	"scheduler picks the steps and raft's election-timeout randomness is reseeded, so the same seed gives the same " +
	"trace byte for byte."

type constants struct {
	Servers   []string `json:"Servers"`
	MaxTerm   uint64   `json:"MaxTerm"`
	MaxLogLen int      `json:"MaxLogLen"`
}

type configRec struct {
	ElectionTick              int    `json:"electionTick"`
	HeartbeatTick             int    `json:"heartbeatTick"`
	PreVote                   bool   `json:"preVote"`
	CheckQuorum               bool   `json:"checkQuorum"`
	MaxInflightMsgs           int    `json:"maxInflightMsgs"`
	MaxSizePerMsg             string `json:"maxSizePerMsg"`
	DisableProposalForwarding bool   `json:"disableProposalForwarding"`
}

type metaRec struct {
	Task      string    `json:"task"`
	Seed      int64     `json:"seed"`
	Steps     int       `json:"steps"`
	Constants constants `json:"constants"`
	Harness   string    `json:"harness"`
	System    string    `json:"system"`
	Config    configRec `json:"config"`
	Ordering  string    `json:"ordering"`
}

func main() {
	seed := flag.Int64("seed", 1, "seed of the scheduler and of raft's election-timeout randomness")
	steps := flag.Int("steps", 400, "number of logged steps (events after Init)")
	out := flag.String("out", "", "write the trace to this file (default: stdout)")
	flag.Parse()
	if *steps < 1 || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: etcd-trace [-seed N] [-steps K] [-out FILE]")
		os.Exit(2)
	}

	defer func() {
		if p := recover(); p != nil {
			fail("panic: %v", p)
		}
	}()
	h := newHarness(*seed)
	init := encode(line{Step: 0, Action: "Init", State: h.read()})
	h.run(*steps)

	meta := struct {
		Meta metaRec `json:"meta"`
	}{metaRec{
		Task:      "etcd",
		Seed:      *seed,
		Steps:     h.steps,
		Constants: constants{[]string{"n1", "n2", "n3"}, h.maxTerm, h.maxLog},
		Harness:   harnessVersion,
		System:    systemVersion,
		Config:    configRec{electionTick, heartbeatTick, true, false, 256, "unlimited", true},
		Ordering:  ordering,
	}}
	var buf bytes.Buffer
	buf.Write(encode(meta))
	buf.WriteByte('\n')
	buf.Write(init)
	buf.WriteByte('\n')
	for _, l := range h.lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}

	if *out == "" {
		if _, err := os.Stdout.Write(buf.Bytes()); err != nil {
			fmt.Fprintf(os.Stderr, "etcd-trace: writing stdout: %v\n", err)
			os.Exit(2)
		}
	} else if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "etcd-trace: %v\n", err)
		os.Exit(2)
	}

	var parts []string
	for _, a := range targetActions {
		parts = append(parts, fmt.Sprintf("%s %d", a, h.counts[a]))
	}
	fmt.Fprintf(os.Stderr, "seed %d: %d steps (%s); MaxTerm %d (largest currentTerm %d), MaxLogLen %d, %d bytes; %d iterations, %d ticks (%d invisible), %d partitions, %d duplicate sends\n",
		*seed, h.steps, strings.Join(parts, ", "), h.maxTerm, h.maxCur, h.maxLog, buf.Len(),
		h.stats.iterations, h.stats.ticks, h.stats.invisibleTicks, h.stats.partitions, h.stats.duplicates)
}
