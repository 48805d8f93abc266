module ballot

go 1.22

require (
	github.com/adhocore/gronx v1.20.4
	github.com/go-zookeeper/zk v1.0.4
)
