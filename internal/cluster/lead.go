package cluster

import "context"

// Leads reports whether this node is the one of the live nodes that runs
// the work only one node should do at a time (the ttl sweeper): the one
// with the least id. The answer follows the leases, so when that node
// stops or dies the next takes over within a lease; while the nodes' views
// differ (a registration just made or run out) two may both act, which
// such work must tolerate. A node that has not joined leads nothing.
func (r *Registry) Leads(ctx context.Context) (bool, error) {
	r.mu.Lock()
	started := r.started
	r.mu.Unlock()
	if !started {
		return false, nil
	}
	members, err := r.Members(ctx)
	if err != nil {
		return false, err
	}
	for _, m := range members {
		if m.ID < r.self.ID {
			return false, nil
		}
	}
	return true, nil
}
