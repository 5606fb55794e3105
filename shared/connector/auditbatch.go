package connector

import (
	"context"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/store"
)

// auditLinger is how long the first of a tenant's proxied calls' audit
// events waits for others to join it in one transaction, when waiting costs
// nothing ([Service.appendCallEvent]).
const auditLinger = 20 * time.Millisecond

// auditBatches gathers the audit events of proxied calls made close
// together, by tenant, so that they are written in one transaction: the
// local server's table syncs its file at each commit, and a commit per call
// took more of the machine than the call's own work.
type auditBatches struct {
	mu      sync.Mutex
	pending map[string]*auditBatch // by tenant
}

// auditBatch is one tenant's events written together, and their outcomes.
type auditBatch struct {
	events []audit.Event // guarded by auditBatches.mu until written
	once   sync.Once
	done   chan struct{} // closed once written (or failed)
	errs   []error       // by event, once done
}

// appendCallEvent appends e, a proxied call's audit event. After the
// call's answer ([Options].After), where the process lives on between calls
// (the queue is not [later.Queue.Held]), it joins the tenant's pending
// batch, written [auditLinger] after the batch's first event or once full.
// Before the answer, or where the process may be frozen after each call (a
// Lambda function, which holds it until its work is done and in which no
// other call would join), it is written at once.
func (s *Service) appendCallEvent(ctx context.Context, e audit.Event) error {
	if s.opts.After == nil || s.opts.After.Held() {
		return s.audit.Append(ctx, e)
	}
	bs := &s.batches
	bs.mu.Lock()
	b := bs.pending[e.Tenant]
	if b == nil {
		b = &auditBatch{done: make(chan struct{})}
		if bs.pending == nil {
			bs.pending = map[string]*auditBatch{}
		}
		bs.pending[e.Tenant] = b
		time.AfterFunc(auditLinger, func() { s.writeBatch(ctx, e.Tenant, b) })
	}
	i := len(b.events)
	b.events = append(b.events, e)
	full := len(b.events) == store.MaxTransactWrites
	if full {
		delete(bs.pending, e.Tenant)
	}
	bs.mu.Unlock()
	if full {
		go s.writeBatch(ctx, e.Tenant, b)
	}
	// The write is bounded by its own timeout: a waiter whose call ran out
	// of time still learns whether its event was written.
	<-b.done
	return b.errs[i]
}

// writeBatch writes b, once: in one transaction, or, if that fails, each
// event alone (with the audit log's own retries), so that a failure loses
// only the events it failed. ctx, the context of one of b's calls, gives
// the write its values only: no call's deadline or end may lose the others'
// events.
func (s *Service) writeBatch(ctx context.Context, t string, b *auditBatch) {
	b.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callAuditTimeout)
		defer cancel()
		bs := &s.batches
		bs.mu.Lock()
		if bs.pending[t] == b {
			delete(bs.pending, t)
		}
		events := b.events
		bs.mu.Unlock()
		defer close(b.done)
		b.errs = make([]error, len(events))
		if len(events) > 1 {
			writes := make([]store.Write, 0, len(events))
			for _, e := range events {
				it, err := s.audit.Item(e)
				if err != nil {
					writes = nil
					break
				}
				writes = append(writes, store.Put(it, store.IfAbsent()))
			}
			if writes != nil && s.table.Transact(ctx, writes...) == nil {
				return
			}
		}
		for i, e := range events {
			b.errs[i] = s.audit.Append(ctx, e)
		}
	})
}
