// Command locksvc-trace runs etcd 3.4's lock service for real and writes the run as an NDJSON
// trace in the canonical vocabulary of tasks/locksvc/task.yaml (see README.md next to build.sh).
//
// An embedded etcd server (go.etcd.io/etcd/embed) listens on 127.0.0.1; three clients, each with
// its own clientv3 connection, take turns at one lock with clientv3/concurrency.Mutex, some of
// them with a deadline that makes Lock give up. A watch on the lock's prefix, opened at revision
// 1, receives every put and delete of a waiter's key in revision order: the server's own order of
// requests, grants and releases. A client's return from Lock() is placed right after the
// revision its Lock() last read (Mutex.Header); see README.md.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/ioutil"
	"math/rand"
	"net"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/clientv3"
	"go.etcd.io/etcd/clientv3/concurrency"
	"go.etcd.io/etcd/embed"
	"go.etcd.io/etcd/mvcc/mvccpb"
	"go.uber.org/zap"
)

const (
	harnessVersion = "locksvc-trace 1"
	systemVersion  = "etcd 3.4.23 clientv3/concurrency.Mutex on an embedded etcd server (Debian golang-etcd-server-dev)"
	prefix         = "/locksvc"
	// Exit codes shared with the other harnesses: 2 a finding, 3 too little contention.
	exitFinding    = 2
	exitContention = 3
	exitUsage      = 64
)

var clients = []string{"c1", "c2", "c3"}

const ordering = "An embedded etcd 3.4 server and three clients on 127.0.0.1; each client takes the lock " +
	"with clientv3/concurrency.Mutex (a fresh session, hence a fresh key, per round). A watch on the " +
	"lock's prefix opened at revision 1 receives every put and delete of a waiter's key in revision " +
	"order, which is the order of the trace: a put is ClientLockRequest, a delete ClientUnlockRequest " +
	"after a round that held the lock and ClientGiveUp after one whose Lock() gave up. A client's return " +
	"from Lock() (ClientCriticalSection) is placed right after the last event at or before the revision " +
	"its Lock() read last (Mutex.Header().Revision): at that revision its key was the oldest, and the " +
	"events that may really come between are other clients' requests and give-ups, which do not touch it."

func fail(code int, format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "locksvc-trace: "+format+"\n", args...)
	os.Exit(code)
}

// ---------------------------------------------------------------------------------------
// The server

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(1, "no free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startServer(dir string) *embed.Etcd {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.Logger = "zap"
	cfg.LogOutputs = []string{"/dev/null"}
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", freePort())}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", freePort())}
	cfg.LCUrls, cfg.ACUrls = []url.URL{client}, []url.URL{client}
	cfg.LPUrls, cfg.APUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fail(1, "cannot start etcd: %v", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		fail(1, "etcd did not become ready within 60 s")
	}
	return e
}

// ---------------------------------------------------------------------------------------
// The clients

type round struct {
	client string
	key    string
	locked bool  // Lock() returned the lock (false: it gave up)
	hdrRev int64 // for a locked round: the revision Lock() read last
}

func newClient(endpoint string) *clientv3.Client {
	// The client's own log would report every deadline a give-up round meets as a warning.
	logs := zap.NewProductionConfig()
	logs.Level = zap.NewAtomicLevelAt(zap.ErrorLevel)
	logs.OutputPaths, logs.ErrorOutputPaths = []string{"stderr"}, []string{"stderr"}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second, LogConfig: &logs})
	if err != nil {
		fail(1, "cannot connect: %v", err)
	}
	return cli
}

// runClient takes the lock `rounds` times. A round with a deadline gives up when the lock is not
// granted in time: Lock() then deletes the waiter's key itself, and closing the round's session
// revokes its lease (deleting the key if a put raced with the deadline).
func runClient(id int, seed int64, rounds int, endpoint string, start <-chan struct{}) []round {
	rng := rand.New(rand.NewSource(seed*7919 + int64(id)))
	cli := newClient(endpoint)
	defer cli.Close()
	var log []round
	<-start
	for r := 0; r < rounds; r++ {
		time.Sleep(time.Duration(rng.Intn(3000)) * time.Microsecond)
		s, err := concurrency.NewSession(cli, concurrency.WithTTL(60))
		if err != nil {
			fail(1, "session: %v", err)
		}
		m := concurrency.NewMutex(s, prefix)
		key := fmt.Sprintf("%s/%x", prefix, s.Lease())
		timeout := 30 * time.Second
		if rng.Intn(100) < 35 {
			timeout = time.Duration(1000+rng.Intn(4000)) * time.Microsecond
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		err = m.Lock(ctx)
		cancel()
		rd := round{client: clients[id], key: key, locked: err == nil}
		if err == nil {
			rd.hdrRev = m.Header().Revision
			time.Sleep(time.Duration(500+rng.Intn(3500)) * time.Microsecond) // the critical section
			if err := m.Unlock(context.Background()); err != nil {
				fail(1, "unlock: %v", err)
			}
		}
		if err := s.Close(); err != nil { // revokes the lease: a key left by a raced deadline goes too
			fail(1, "closing a session: %v", err)
		}
		log = append(log, rd)
	}
	return log
}

// ---------------------------------------------------------------------------------------
// The trace

type event struct {
	rev    int64
	put    bool
	key    string
	client string
}

type state struct {
	queue []string
	pc    map[string]string
}

func (s *state) index(c string) int {
	for i, q := range s.queue {
		if q == c {
			return i
		}
	}
	return -1
}

// step applies one canonical action, or says why the real run contradicts the vocabulary.
func (s *state) step(action, c string) error {
	switch action {
	case "ClientLockRequest":
		if s.pc[c] != "idle" || s.index(c) >= 0 {
			return fmt.Errorf("%s requests while %s", c, s.pc[c])
		}
		s.queue = append(s.queue, c)
		s.pc[c] = "waiting"
	case "ClientCriticalSection":
		if s.pc[c] != "waiting" || len(s.queue) == 0 || s.queue[0] != c {
			return fmt.Errorf("%s enters while %s with queue %v", c, s.pc[c], s.queue)
		}
		s.pc[c] = "locked"
	case "ClientUnlockRequest":
		if s.pc[c] != "locked" || s.queue[0] != c {
			return fmt.Errorf("%s unlocks while %s with queue %v", c, s.pc[c], s.queue)
		}
		s.queue = s.queue[1:]
		s.pc[c] = "idle"
	case "ClientGiveUp":
		i := s.index(c)
		if s.pc[c] != "waiting" || i < 0 {
			return fmt.Errorf("%s gives up while %s", c, s.pc[c])
		}
		s.queue = append(append([]string{}, s.queue[:i]...), s.queue[i+1:]...)
		s.pc[c] = "idle"
	default:
		return fmt.Errorf("unknown action %s", action)
	}
	return nil
}

func (s *state) json() map[string]interface{} {
	q := append([]string{}, s.queue...)
	pc := map[string]string{}
	for k, v := range s.pc {
		pc[k] = v
	}
	return map[string]interface{}{"queue": q, "pc": pc}
}

type step struct {
	action string
	client string
	rev    int64
}

// merge orders the run: the watch's events by revision, each locked round's entry right after
// the last event at or before the revision its Lock() read.
func merge(events []event, rounds map[string]round) ([]step, error) {
	var steps []step
	type entry struct {
		rev    int64
		client string
	}
	var entries []entry
	for _, rd := range rounds {
		if rd.locked {
			entries = append(entries, entry{rd.hdrRev, rd.client})
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].rev < entries[j].rev })
	k := 0
	for i, ev := range events {
		rd, ok := rounds[ev.key]
		if !ok {
			return nil, fmt.Errorf("revision %d: key %s belongs to no round", ev.rev, ev.key)
		}
		action := "ClientLockRequest"
		if !ev.put {
			action = "ClientGiveUp"
			if rd.locked {
				action = "ClientUnlockRequest"
			}
		}
		steps = append(steps, step{action, rd.client, ev.rev})
		for k < len(entries) && entries[k].rev >= ev.rev && (i+1 == len(events) || entries[k].rev < events[i+1].rev) {
			steps = append(steps, step{"ClientCriticalSection", entries[k].client, entries[k].rev})
			k++
		}
	}
	if k != len(entries) {
		return nil, fmt.Errorf("%d entries into the lock were not placed", len(entries)-k)
	}
	return steps, nil
}

func main() {
	seed := flag.Int64("seed", 1, "workload seed")
	rounds := flag.Int("rounds", 6, "lock rounds per client")
	out := flag.String("out", "", "write the NDJSON trace here instead of stdout")
	minEach := flag.Int("min-each", 0, "exit 3, writing nothing, unless every action, give-ups behind another waiter and requests while the lock is held each occur this often")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: locksvc-trace [-seed N] [-rounds K] [-out FILE] [-min-each M]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 || *rounds < 1 {
		flag.Usage()
		os.Exit(exitUsage)
	}

	dir, err := ioutil.TempDir("", "locksvc-trace")
	if err != nil {
		fail(1, "temp dir: %v", err)
	}
	defer os.RemoveAll(dir)
	t0 := time.Now()
	e := startServer(dir)
	endpoint := e.Clients[0].Addr().String()
	ready := time.Since(t0)

	// The watch sees every write under the prefix from the first revision on.
	watcher := newClient(endpoint)
	wctx, wcancel := context.WithCancel(context.Background())
	wch := watcher.Watch(wctx, prefix+"/", clientv3.WithPrefix(), clientv3.WithRev(1))

	start := make(chan struct{})
	logs := make([][]round, len(clients))
	var wg sync.WaitGroup
	for id := range clients {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			logs[id] = runClient(id, *seed, *rounds, endpoint, start)
		}(id)
	}
	close(start)
	wg.Wait()

	// Every write is under the prefix, so the store's revision is the last event's.
	resp, err := watcher.Get(context.Background(), prefix+"/", clientv3.WithPrefix())
	if err != nil {
		fail(1, "reading the final revision: %v", err)
	}
	if len(resp.Kvs) != 0 {
		fail(exitFinding, "%d waiter keys remain after every session was closed", len(resp.Kvs))
	}
	last := resp.Header.Revision
	var events []event
	for last > 1 && (len(events) == 0 || events[len(events)-1].rev < last) {
		select {
		case wr, ok := <-wch:
			if !ok || wr.Err() != nil {
				fail(1, "the watch ended early: %v", wr.Err())
			}
			for _, ev := range wr.Events {
				events = append(events, event{rev: ev.Kv.ModRevision, put: ev.Type == mvccpb.PUT, key: string(ev.Kv.Key)})
			}
		case <-time.After(30 * time.Second):
			fail(1, "the watch did not reach revision %d", last)
		}
	}
	wcancel()
	watcher.Close()
	e.Close()

	byKey := map[string]round{}
	for _, l := range logs {
		for _, rd := range l {
			byKey[rd.key] = rd
		}
	}
	steps, err := merge(events, byKey)
	if err != nil {
		fail(exitFinding, "%v", err)
	}

	// Replay through the canonical semantics; a contradiction is a finding about the run.
	st := &state{pc: map[string]string{}}
	for _, c := range clients {
		st.pc[c] = "idle"
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	meta := map[string]interface{}{"meta": map[string]interface{}{
		"task": "locksvc", "seed": *seed, "rounds": *rounds, "clients": clients,
		"constants": map[string]interface{}{"Clients": clients},
		"harness":   harnessVersion, "system": systemVersion, "ordering": ordering,
	}}
	enc.Encode(meta)
	enc.Encode(map[string]interface{}{"step": 0, "action": "Init", "state": st.json()})
	counts := map[string]int{}
	giveUpsBehind, requestsWhileHeld := 0, 0
	for i, s := range steps {
		if s.action == "ClientGiveUp" && st.index(s.client) > 0 {
			giveUpsBehind++
		}
		if s.action == "ClientLockRequest" {
			for _, c := range clients {
				if st.pc[c] == "locked" {
					requestsWhileHeld++
				}
			}
		}
		if err := st.step(s.action, s.client); err != nil {
			fail(exitFinding, "step %d (revision %d): %v", i+1, s.rev, err)
		}
		counts[s.action]++
		enc.Encode(map[string]interface{}{"step": i + 1, "action": s.action, "actor": s.client, "state": st.json()})
	}
	if len(st.queue) != 0 {
		fail(exitFinding, "the queue is not empty at the end: %v", st.queue)
	}
	fmt.Fprintf(os.Stderr, "locksvc-trace: seed=%d rounds=%d revisions=%d steps=%d | %v | give-ups behind a waiter=%d requests while held=%d | etcd ready in %v, total %v\n",
		*seed, *rounds, last, len(steps), counts, giveUpsBehind, requestsWhileHeld, ready.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
	need := map[string]int{"ClientGiveUp behind another waiter": giveUpsBehind, "ClientLockRequest while the lock is held": requestsWhileHeld}
	for _, a := range []string{"ClientLockRequest", "ClientCriticalSection", "ClientUnlockRequest", "ClientGiveUp"} {
		need[a] = counts[a]
	}
	for what, n := range need {
		if n < *minEach {
			fmt.Fprintf(os.Stderr, "locksvc-trace: too little contention: %s occur %d times (< -min-each %d); nothing written\n", what, n, *minEach)
			os.Exit(exitContention)
		}
	}
	if *out == "" {
		fmt.Print(b.String())
		return
	}
	if err := ioutil.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		fail(1, "cannot write %s: %v", *out, err)
	}
}
