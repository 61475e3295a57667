package main

// The canonical records the trace speaks in (the task's vocabulary), and their JSON.

import (
	"bytes"
	"encoding/json"
	"sort"
)

type entryRec struct {
	Term  uint64 `json:"term"`
	Value string `json:"value"`
}

// msgRec is one RPC on the network. Every message has every field; a field its type does not
// set is zero, FALSE or the empty sequence, so that messages compare as records of one shape.
type msgRec struct {
	Type         string     `json:"type"`
	From         string     `json:"from"`
	To           string     `json:"to"`
	Term         uint64     `json:"term"`
	LastLogIndex uint64     `json:"lastLogIndex"`
	LastLogTerm  uint64     `json:"lastLogTerm"`
	Granted      bool       `json:"granted"`
	PrevLogIndex uint64     `json:"prevLogIndex"`
	PrevLogTerm  uint64     `json:"prevLogTerm"`
	Entries      []entryRec `json:"entries"`
	LeaderCommit uint64     `json:"leaderCommit"`
	Heartbeat    bool       `json:"heartbeat"`
	Success      bool       `json:"success"`
	LastLog      uint64     `json:"lastLog"`
	MatchIndex   uint64     `json:"matchIndex"`
	ReqTerm      uint64     `json:"reqTerm"`
}

func (m msgRec) key() string { return string(encode(m)) }

type strSet struct {
	Set []string `json:"$set"`
}

type msgSet struct {
	Set []msgRec `json:"$set"`
}

// state is the canonical state; the field order is the vocabulary's order.
type state struct {
	CurrentTerm  map[string]uint64            `json:"currentTerm"`
	State        map[string]string            `json:"state"`
	VotedFor     map[string]string            `json:"votedFor"`
	Leader       map[string]string            `json:"leader"`
	Log          map[string][]entryRec        `json:"log"`
	CommitIndex  map[string]uint64            `json:"commitIndex"`
	VotesGranted map[string]strSet            `json:"votesGranted"`
	NextIndex    map[string]map[string]uint64 `json:"nextIndex"`
	MatchIndex   map[string]map[string]uint64 `json:"matchIndex"`
	Messages     msgSet                       `json:"messages"`
}

type args struct {
	M *msgRec `json:"m,omitempty"`
	J string  `json:"j,omitempty"`
	V string  `json:"v,omitempty"`
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
		fail(1, "cannot encode JSON: %v", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
