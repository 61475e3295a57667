// raftkvs-trace runs three hashicorp/raft 1.1.2 nodes (Debian's golang-github-hashicorp-raft-dev,
// unmodified) with a key-value state machine in one process, on a network and stores of its
// own, and writes the canonical trace of their steps as NDJSON.
//
// Exit codes: 0 a trace was written; 2 the library did something the harness does not know
// (a finding, with the reason on stderr); 3 the run could not be linearized into atomic steps
// (a timer fired inside a step, or the state changed outside one): run again; 64 usage; 1 other
// errors.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"sort"
)

const (
	harnessVersion = "raftkvs-trace 1"
	systemVersion  = "github.com/hashicorp/raft 1.1.2 (Debian golang-github-hashicorp-raft-dev)"
	ordering       = "Three hashicorp/raft nodes run in one process on the harness's transport (every RPC is " +
		"a call that waits in flight until the scheduler delivers or drops it, and its answer waits until the " +
		"scheduler returns or drops it) and stores (every write is noted in the writing goroutine). A " +
		"coordinator keeps one step open at a time: a step the scheduler opens (deliver, return, drop, client " +
		"request, crash, restart) or one a node opens by its own timer (its first store write or role change) " +
		"or by a replication call. Every other node's write or call waits until the open step ends; a step " +
		"ends when the library has done what it causes, and the state is read then. Before each step the " +
		"state is read again and must equal the one logged: runs with a change no step explains are discarded."
)

func fail(code int, format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "raftkvs-trace: "+format+"\n", a...)
	os.Exit(code)
}

type constants struct {
	Servers   []string `json:"Servers"`
	Values    []string `json:"Values"`
	MaxTerm   uint64   `json:"MaxTerm"`
	MaxLogLen int      `json:"MaxLogLen"`
}

type configRec struct {
	HeartbeatTimeoutMs int  `json:"heartbeatTimeoutMs"`
	ElectionTimeoutMs  int  `json:"electionTimeoutMs"`
	LeaderLeaseMs      int  `json:"leaderLeaseTimeoutMs"`
	CommitTimeoutMs    int  `json:"commitTimeoutMs"`
	Pipelining         bool `json:"pipelining"`
	Snapshots          bool `json:"snapshots"`
}

type metaRec struct {
	Task      string         `json:"task"`
	Seed      int64          `json:"seed"`
	Steps     int            `json:"steps"`
	Constants constants      `json:"constants"`
	Harness   string         `json:"harness"`
	System    string         `json:"system"`
	Config    configRec      `json:"config"`
	Actions   map[string]int `json:"actions"`
	Ordering  string         `json:"ordering"`
}

func main() {
	seed := flag.Int64("seed", 1, "seed of the scheduler")
	steps := flag.Int("steps", 200, "number of logged steps after Init")
	puts := flag.Int("puts", 6, "number of client writes")
	out := flag.String("out", "", "write the trace to this file (default: stdout)")
	flag.Parse()
	if *steps < 1 || *puts < 0 || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: raftkvs-trace [-seed N] [-steps K] [-puts P] [-out FILE]")
		os.Exit(64)
	}
	names := []string{"s1", "s2", "s3"}
	c := newCoord(names)
	c.bootstrap()
	initLine := encode(line{Step: 0, Action: "Init", State: c.snapshot()})
	c.run(rand.New(rand.NewSource(*seed)), *steps, *puts)
	c.mu.Lock() // every node's goroutine stays blocked from here on
	values := []string{}
	for k := 1; k <= *puts; k++ {
		values = append(values, fmt.Sprintf("v%d", k))
	}
	sort.Strings(values)
	ms := int(heartbeatTimeout.Milliseconds())
	meta := struct {
		Meta metaRec `json:"meta"`
	}{metaRec{
		Task: "raftkvs", Seed: *seed, Steps: len(c.lines),
		Constants: constants{names, values, c.maxTerm, c.maxLog},
		Harness:   harnessVersion, System: systemVersion,
		Config:  configRec{ms, ms, ms, int(commitTimeout.Milliseconds()), false, false},
		Actions: c.counts, Ordering: ordering,
	}}
	var buf bytes.Buffer
	buf.Write(encode(meta))
	buf.WriteByte('\n')
	buf.Write(initLine)
	buf.WriteByte('\n')
	for _, l := range c.lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	if *out == "" {
		os.Stdout.Write(buf.Bytes())
		os.Exit(0)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		fail(1, "cannot write %s: %v", *out, err)
	}
	os.Exit(0)
}
