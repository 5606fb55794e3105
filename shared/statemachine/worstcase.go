package statemachine

import (
	"fmt"
	"math"
	"time"
)

// maxAttempts is how many times r retries: its MaxAttempts, by default 3.
func (r retrier) maxAttempts() int {
	if r.MaxAttempts == nil {
		return 3
	}
	return *r.MaxAttempts
}

// wait is how long r waits before its retry number n (from 0):
// IntervalSeconds (default 1) times BackoffRate (default 2) to the n.
func (r retrier) wait(n int) time.Duration {
	interval, backoff := 1.0, 2.0
	if r.IntervalSeconds != nil {
		interval = *r.IntervalSeconds
	}
	if r.BackoffRate != nil {
		backoff = *r.BackoffRate
	}
	return time.Duration(interval * math.Pow(backoff, float64(n)) * float64(time.Second))
}

// Timeout returns the machine's TimeoutSeconds, or 0 if it has none.
func (m *Machine) Timeout() time.Duration {
	return time.Duration(m.timeoutSeconds) * time.Second
}

// WorstCase returns the longest an execution can run, the machine's own
// TimeoutSeconds aside: along the slowest path from StartAt, every Task uses
// its whole TimeoutSeconds on its first attempt and on every retry its
// retriers allow (each retrier counts its own), and waits each retry's
// interval. Other states take no time. It is an error if a reachable Task
// has no TimeoutSeconds or the states can loop, since then nothing bounds
// an execution.
func (m *Machine) WorstCase() (time.Duration, error) {
	memo := map[string]time.Duration{}
	visiting := map[string]bool{}
	var longest func(name string) (time.Duration, error)
	longest = func(name string) (time.Duration, error) {
		if d, ok := memo[name]; ok {
			return d, nil
		}
		if visiting[name] {
			return 0, fmt.Errorf("statemachine: state %s is part of a loop, so no execution time bounds it", name)
		}
		visiting[name] = true
		defer delete(visiting, name)
		s := m.states[name]
		self, err := s.worstCase()
		if err != nil {
			return 0, err
		}
		var after time.Duration
		for _, next := range s.successors() {
			d, err := longest(next)
			if err != nil {
				return 0, err
			}
			after = max(after, d)
		}
		memo[name] = self + after
		return self + after, nil
	}
	return longest(m.startAt)
}

// worstCase is the longest s itself can take: nothing but for a Task.
func (s *state) worstCase() (time.Duration, error) {
	if s.Type != "Task" {
		return 0, nil
	}
	if s.TimeoutSeconds == 0 {
		return 0, fmt.Errorf("statemachine: task %s has no TimeoutSeconds, so nothing bounds it", s.name)
	}
	attempt := time.Duration(s.TimeoutSeconds) * time.Second
	d := attempt
	for _, r := range s.Retry {
		for n := range r.maxAttempts() {
			d += r.wait(n) + attempt
		}
	}
	return d, nil
}

// successors are the states s may pass control to.
func (s *state) successors() []string {
	var out []string
	for _, next := range []string{s.Next, s.Default} {
		if next != "" {
			out = append(out, next)
		}
	}
	for _, c := range s.Catch {
		out = append(out, c.Next)
	}
	for _, r := range s.choices {
		out = append(out, r.next)
	}
	return out
}
