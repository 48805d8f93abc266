package main

// A proposal: what a candidate's is, fixed once made, and what any
// proposal's name says (its sequence number, its --priority, --slots)
// and the line's order they make.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// proposalFacts is what a candidate's proposal is, fixed at propose
// (triggers: as the runner stands it).
type proposalFacts struct {
	basePath string
	id       string // --candidate-id
	node     string // full path of the proposal node
	seq      int64
	priority int   // --priority, in the proposal's name
	slots    int   // --slots: how many lead at once (1: the recipe), in the proposal's name
	token    int64 // the proposal's czxid: grows from one leadership to the next
	triggers bool  // run cron: its leader watches <base>/trigger (trigger.go); set before it leads
}

// proposalSeq extracts the sequence number of a proposal node name, such
// as "_c_<guid>-proposal-0000000012"; ok is false for any other node.
func proposalSeq(name string) (int64, bool) {
	i := strings.LastIndex(name, proposalPrefix)
	if i < 0 {
		return 0, false
	}
	digits := name[i+len(proposalPrefix):]
	if len(digits) != 10 {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	return n, err == nil
}

// proposalPriority is the --priority a proposal's name carries, as in
// "_c_<guid>-priority+5-proposal-0000000012"; 0 when it carries none (the
// default, and every proposal of a ballot older than priorities).
func proposalPriority(name string) int {
	i := strings.LastIndex(name, proposalPrefix)
	if i < 0 {
		return 0
	}
	tag := name[:i] // "_c_<guid>-" or "_c_<guid>-priority+5-"
	j := strings.LastIndex(tag, "-"+priorityMark)
	if j < 0 || !strings.HasSuffix(tag, "-") {
		return 0
	}
	n, err := strconv.Atoi(tag[j+1+len(priorityMark) : len(tag)-1])
	if err != nil {
		return 0
	}
	return n
}

// priorityTag is the part of a proposal's name that carries priority p.
func priorityTag(p int) string {
	if p == 0 {
		return "" // the name older ballots make and read
	}
	return fmt.Sprintf("%s%+d-", priorityMark, p)
}

// sortedProposals returns the proposal node names among children in line
// order: the highest --priority first, then the lowest sequence number.
// With no priorities (all 0) that is the recipe's order, lowest first.
func sortedProposals(children []string) []string {
	type entry struct {
		name     string
		priority int
		seq      int64
	}
	var line []entry
	for _, c := range children {
		if seq, ok := proposalSeq(c); ok {
			line = append(line, entry{c, proposalPriority(c), seq})
		}
	}
	sort.Slice(line, func(i, j int) bool {
		if line[i].priority != line[j].priority {
			return line[i].priority > line[j].priority
		}
		return line[i].seq < line[j].seq
	})
	out := make([]string, len(line))
	for i, e := range line {
		out[i] = e.name
	}
	return out
}
