package commit

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"
)

// Table properties that tune the loop, with Java's defaults.
const (
	PropNumRetries   = "commit.retry.num-retries"
	PropMinWaitMS    = "commit.retry.min-wait-ms"
	PropMaxWaitMS    = "commit.retry.max-wait-ms"
	PropTotalTimeout = "commit.retry.total-timeout-ms"

	DefaultNumRetries   = 4
	DefaultMinWait      = 100 * time.Millisecond
	DefaultMaxWait      = 60 * time.Second
	DefaultTotalTimeout = 30 * time.Minute
)

// Options bound the retries of Run.
type Options struct {
	// NumRetries is how many times a conflicting commit is retried; the
	// change is attempted at most NumRetries+1 times.
	NumRetries int
	// MinWait and MaxWait bound the backoff before a retry: MinWait doubled
	// per retry, plus up to 10% jitter, never above MaxWait.
	MinWait, MaxWait time.Duration
	// TotalTimeout stops retrying once this much time has passed since the
	// first attempt; zero means no limit.
	TotalTimeout time.Duration
	// Sleep waits d or until ctx is done; nil sleeps on a timer. Tests set
	// it to observe the waits without sleeping.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now tells the time for TotalTimeout; nil is time.Now. For tests.
	Now func() time.Time
	// Warn receives what went wrong after a commit landed (old metadata
	// files that could not be deleted): the commit stands, and the caller
	// reports it. Commands set it to print a warning; nil drops it.
	Warn func(error)
}

func (o Options) warn(err error) {
	if o.Warn != nil {
		o.Warn(err)
	}
}

// DefaultOptions returns Java's defaults.
func DefaultOptions() Options {
	return Options{
		NumRetries:   DefaultNumRetries,
		MinWait:      DefaultMinWait,
		MaxWait:      DefaultMaxWait,
		TotalTimeout: DefaultTotalTimeout,
	}
}

// OptionsFromProperties reads the commit.retry.* table properties. A value
// that is missing, unparsable or negative keeps the default: a bad property
// must not make a maintenance run give up on the first conflict.
func OptionsFromProperties(props map[string]string) Options {
	o := DefaultOptions()
	if n, ok := nonNegative(props, PropNumRetries); ok {
		o.NumRetries = int(n)
	}
	if n, ok := nonNegative(props, PropMinWaitMS); ok {
		o.MinWait = time.Duration(n) * time.Millisecond
	}
	if n, ok := nonNegative(props, PropMaxWaitMS); ok {
		o.MaxWait = time.Duration(n) * time.Millisecond
	}
	if n, ok := nonNegative(props, PropTotalTimeout); ok {
		o.TotalTimeout = time.Duration(n) * time.Millisecond
	}
	return o
}

func nonNegative(props map[string]string, key string) (int64, bool) {
	v, ok := props[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > int64(time.Duration(1<<62)/time.Millisecond) {
		return 0, false
	}
	return n, true
}

// backoff returns the wait before retry number retry (1 for the first
// retry): MinWait * 2^(retry-1) plus up to 10% jitter, capped at MaxWait.
// Jitter keeps concurrent committers from retrying in lockstep.
func (o Options) backoff(retry int) time.Duration {
	minW, maxW := o.MinWait, o.MaxWait
	if minW < 0 {
		minW = 0
	}
	if maxW < minW {
		maxW = minW
	}
	d := minW
	for i := 1; i < retry && d < maxW; i++ {
		d *= 2
	}
	if d > maxW {
		d = maxW
	}
	if j := int64(d / 10); j > 0 {
		d += time.Duration(rand.Int64N(j + 1))
	}
	if d > maxW {
		d = maxW
	}
	return d
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o Options) sleep(ctx context.Context, d time.Duration) error {
	if o.Sleep != nil {
		return o.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
