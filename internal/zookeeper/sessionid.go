package zookeeper

// How a ZooKeeper session id is written wherever ballot shows or records
// one: logs, handover and once records, info and watch, BALLOT_SESSION_ID.

import "fmt"

// SessionHex is session id as ZooKeeper's own tools print it (cons, the
// server's log: Java's Long.toHexString), unsigned: a server whose myid is
// 128 or more makes ids with the top bit set, which as a signed int64
// would print as 0x-….
func SessionHex(id int64) string { return fmt.Sprintf("0x%x", uint64(id)) }
