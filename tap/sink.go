package tap

import (
	"github.com/tap-dev/tap/tap/deletes"
	"github.com/tap-dev/tap/tap/mapped"
	"github.com/tap-dev/tap/tap/output"
)

// A sink is where a stream's records go, whichever step made them (the
// write path, write.go), and the checkpoints that follow them
// (checkpoint.go): the streams its maps write it as, its page writer, its
// deletes. It is part of its node, and reads the node's plan, resume and
// counts through n.
type sink struct {
	n *node

	// outs are, with stream maps, the streams the node is written as
	// (nil: itself).
	outs *mapped.Outputs

	writer output.PageWriter // SCHEMA once, the version, the record encoded, the page's lines

	deletions *deletes.Stream // its deletes: events, keys file, reconcile (tombstone.go); nil without
}
