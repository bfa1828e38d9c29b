package tenant

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/apierror"
)

// A namespace may burst to its rate, is then held to it, and is told how
// long to wait; another namespace's bucket is its own.
func TestRates(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	for _, tc := range []struct {
		name     string
		rate     int64
		calls    []time.Duration // offsets from t0
		refused  []int           // indexes of the calls refused
		minDelay time.Duration   // the first refusal's delay, at least
	}{
		{name: "no rate", rate: 0, calls: []time.Duration{0, 0, 0, 0}},
		{name: "burst of the rate", rate: 3, calls: []time.Duration{0, 0, 0}},
		{name: "past the burst", rate: 3, calls: []time.Duration{0, 0, 0, 0}, refused: []int{3}, minDelay: 333 * time.Millisecond},
		{name: "refills", rate: 2, calls: []time.Duration{0, 0, 0, 500 * time.Millisecond, 500 * time.Millisecond}, refused: []int{2, 4}, minDelay: 500 * time.Millisecond},
		{name: "full after a while", rate: 2, calls: []time.Duration{0, 0, 10 * time.Second, 10 * time.Second, 10 * time.Second}, refused: []int{4}, minDelay: 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRates()
			var refused []int
			var first time.Duration
			for i, at := range tc.calls {
				err := r.Allow(7, tc.rate, t0.Add(at))
				if err == nil {
					continue
				}
				e, ok := apierror.From(err)
				if !ok || e.Code != apierror.ResourceExhausted || e.RetryDelay <= 0 {
					t.Fatalf("call %d: %v, want RESOURCE_EXHAUSTED with a delay", i, err)
				}
				if refused == nil {
					first = e.RetryDelay
				}
				refused = append(refused, i)
			}
			if len(refused) != len(tc.refused) || (len(refused) > 0 && refused[0] != tc.refused[0]) {
				t.Fatalf("refused calls %v, want %v", refused, tc.refused)
			}
			if first < tc.minDelay || first > time.Second {
				t.Errorf("first delay %s, want within [%s, 1s]", first, tc.minDelay)
			}
			if err := r.Allow(8, tc.rate, t0); err != nil {
				t.Errorf("another namespace was refused: %v", err)
			}
			if u := r.Usage(7, t0.Add(tc.calls[len(tc.calls)-1])); u.Refused != int64(len(tc.refused)) {
				t.Errorf("usage counts %d refused, want %d", u.Refused, len(tc.refused))
			}
		})
	}
}

func TestRateUsageLastSecond(t *testing.T) {
	r := NewRates()
	t0 := time.Unix(2_000_000, 0)
	for range 4 {
		if err := r.Allow(1, 10, t0.Add(100*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	if u := r.Usage(1, t0.Add(1500*time.Millisecond)); u.LastSecond != 4 {
		t.Errorf("the second after: %d calls, want 4", u.LastSecond)
	}
	if u := r.Usage(1, t0.Add(3*time.Second)); u.LastSecond != 0 {
		t.Errorf("seconds later: %d calls, want 0", u.LastSecond)
	}
}

func TestCheckMetadata(t *testing.T) {
	long := make([]byte, MaxMetadataKeyBytes+1)
	for i := range long {
		long[i] = 'k'
	}
	big := append(append([]byte(`"`), make([]byte, MaxMetadataValueBytes)...), '"')
	for i := 1; i < len(big)-1; i++ {
		big[i] = 'v'
	}
	for _, tc := range []struct {
		key   string
		value string
		ok    bool
	}{
		{"k", `{"a":1}`, true},
		{"k", `"text"`, true},
		{"k", `12`, true},
		{"", `1`, false},
		{string(long), `1`, false},
		{string(long[:MaxMetadataKeyBytes]), `1`, true},
		{"k\xff", `1`, false},
		{"k", ``, false},
		{"k", `{"a":`, false},
		{"k", `1 2`, false},
		{"k", string(big), false},
	} {
		err := CheckMetadataKey(tc.key)
		if err == nil {
			err = CheckMetadataValue([]byte(tc.value))
		}
		if (err == nil) != tc.ok {
			t.Errorf("key %.20q value %.20q: %v, want ok=%v", tc.key, tc.value, err, tc.ok)
		}
		if e, coded := apierror.From(err); err != nil && (!coded || e.Code != apierror.InvalidArgument) {
			t.Errorf("key %.20q value %.20q: %v, want INVALID_ARGUMENT", tc.key, tc.value, err)
		}
	}
}

// A quota that cannot be read leaves the one last known (none at first),
// and the store is asked again only after QuotaRefresh.
func TestQuotasWhenTheStoreFails(t *testing.T) {
	var loads int
	failing := errors.New("damaged")
	answer := func() (Quota, error) { return Quota{RequestsPerSecond: 5}, nil }
	c := NewQuotas(func(context.Context, int64) (Quota, error) { loads++; return answer() })
	now := time.Unix(1000, 0)
	if q, err := c.Get(context.Background(), 7, now); err != nil || q.RequestsPerSecond != 5 {
		t.Fatalf("first read: %+v, %v", q, err)
	}
	answer = func() (Quota, error) { return Quota{}, failing }
	now = now.Add(QuotaRefresh)
	if q, err := c.Get(context.Background(), 7, now); !errors.Is(err, failing) || q.RequestsPerSecond != 5 {
		t.Errorf("a failed read: %+v, %v; want the quota last known and the error", q, err)
	}
	if q, err := c.Get(context.Background(), 7, now.Add(QuotaRefresh/2)); err != nil || q.RequestsPerSecond != 5 || loads != 2 {
		t.Errorf("within QuotaRefresh of a failed read: %+v, %v after %d loads; want the last known, no third load", q, err, loads)
	}
	if q, err := c.Get(context.Background(), 8, now); !errors.Is(err, failing) || q != (Quota{}) {
		t.Errorf("a namespace never read, on a failing store: %+v, %v; want no quota and the error", q, err)
	}
}

// Peek reads no store; Refresh reads a stale quota in the background,
// once at a time for a namespace.
func TestQuotasPeekAndRefresh(t *testing.T) {
	release := make(chan struct{})
	var loads atomic.Int32
	c := NewQuotas(func(context.Context, int64) (Quota, error) {
		loads.Add(1)
		<-release
		return Quota{StorageBytes: 9}, nil
	})
	now := time.Unix(1000, 0)
	if q, stale := c.Peek(3, now); !stale || q != (Quota{}) {
		t.Fatalf("a quota never read: %+v stale %v, want none and stale", q, stale)
	}
	c.Refresh(3, now)
	c.Refresh(3, now) // while the first read is under way: not a second
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if q, stale := c.Peek(3, now); !stale && q.StorageBytes == 9 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background read never landed")
		}
		time.Sleep(time.Millisecond)
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("%d reads, want 1", n)
	}
	if _, stale := c.Peek(3, now.Add(QuotaRefresh)); !stale {
		t.Error("a quota read QuotaRefresh ago is not stale")
	}
}
