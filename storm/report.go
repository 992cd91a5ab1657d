package storm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/idemproof/idemproof/profile"
)

// Kind marks a storm report (report.json of `idemproof storm`), so `idemproof report
// merge` tells it from a check's.
const Kind = "idemproof-storm"

// SchemaVersion is the report's format version.
const SchemaVersion = 1

// Report is a storm's (or a shard's) result.
type Report struct {
	Kind          string    `json:"kind"`
	SchemaVersion int       `json:"schema_version"`
	Target        string    `json:"target"`
	Source        string    `json:"source,omitempty"` // the profile as the command line named it
	Seed          int64     `json:"seed"`
	Shards        []string  `json:"shards"` // "1/1", or the merged shards' i/n
	Started       time.Time `json:"started"`
	Clients       int       `json:"clients"`
	Mix           Mix       `json:"mix"`
	Schedule      string    `json:"schedule,omitempty"` // every operation's, on a replay
	// Ops is how many operations the report's shards planned; Done how many ran.
	Ops        int       `json:"ops"`
	Done       int       `json:"done"`
	ElapsedMS  float64   `json:"elapsed_ms"`
	Throughput float64   `json:"throughput"` // operations per second
	P50MS      float64   `json:"p50_ms"`     // an operation's latency, first attempt to last answer
	P99MS      float64   `json:"p99_ms"`
	Latency    histogram `json:"latency_histogram"`
	Attempts   int       `json:"attempts"` // every copy's attempts, as its client made them
	Faulted    int       `json:"faulted"`  // attempts the proxy faulted after the upstream (or delivered twice)
	// Counts per category (Categories) and the first operations of each.
	Counts      map[string]int       `json:"counts"`
	Findings    map[string][]Finding `json:"findings,omitempty"`
	Shrunk      []Shrunk             `json:"shrunk,omitempty"`
	Complete    bool                 `json:"complete"`
	Interrupted string               `json:"interrupted,omitempty"`
}

// Finding is one operation that broke a rule.
type Finding struct {
	Category string `json:"category"`
	Index    int    `json:"op"`
	Entity   string `json:"entity"`
	Key      string `json:"key"`
	Schedule string `json:"schedule"`
	Detail   string `json:"detail"`
}

// Shrunk is a finding reduced to the smallest schedule that still shows it.
type Shrunk struct {
	Category string `json:"category"`
	From     string `json:"from"`     // the failing operation's schedule
	Schedule string `json:"schedule"` // the smallest that still failed
	Requests int    `json:"requests"`
	Tries    int    `json:"tries"` // runs of it that showed the finding, of those made
	Runs     int    `json:"runs"`
	Command  string `json:"command"`
}

func newReport(cfg Config, p *profile.Profile, planned int) *Report {
	r := &Report{
		Kind: Kind, SchemaVersion: SchemaVersion, Target: p.Name, Source: p.Source, Seed: cfg.Seed,
		Shards: []string{fmt.Sprintf("%d/%d", cfg.Shard, cfg.Shards)}, Started: time.Now().UTC(),
		Clients: cfg.Clients, Mix: cfg.Mix, Ops: planned, Counts: map[string]int{}, Complete: true,
	}
	if cfg.Schedule != nil {
		r.Schedule = cfg.Schedule.String()
	}
	for _, c := range Categories {
		r.Counts[c] = 0
	}
	return r
}

func (r *Report) add(f Finding, listed int) {
	r.Counts[f.Category]++
	if r.Findings == nil {
		r.Findings = map[string][]Finding{}
	}
	if len(r.Findings[f.Category]) < listed {
		r.Findings[f.Category] = append(r.Findings[f.Category], f)
	}
}

// Safe reports whether the storm found nothing that breaks the contract: no duplicate,
// lost, fabricated or differing answer.
func (r *Report) Safe() bool {
	return r.Counts[CatDuplicated]+r.Counts[CatLost]+r.Counts[CatFabricated]+r.Counts[CatDiffers] == 0
}

// WriteText writes the report for people: the numbers, each category with its
// operations, and the shrunk schedules with the command that repeats each.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "storm %s, shard(s) %s, seed %d: %d of %d operations in %s (%.1f ops/s), %d clients\n",
		r.Target, strings.Join(r.Shards, ","), r.Seed, r.Done, r.Ops, (time.Duration(r.ElapsedMS) * time.Millisecond).Round(time.Millisecond),
		r.Throughput, r.Clients)
	fmt.Fprintf(w, "  latency p50 %s, p99 %s; %d attempts, %d faulted after the upstream or delivered twice\n",
		msText(r.P50MS), msText(r.P99MS), r.Attempts, r.Faulted)
	var parts []string
	for _, c := range Categories {
		parts = append(parts, fmt.Sprintf("%s %d", c, r.Counts[c]))
	}
	fmt.Fprintf(w, "  %s\n", strings.Join(parts, ", "))
	for _, c := range Categories {
		list := r.Findings[c]
		if len(list) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s (%d):\n", c, r.Counts[c])
		for _, f := range list {
			fmt.Fprintf(w, "  op %d  key %s  entity %s  schedule %s: %s\n", f.Index, f.Key, f.Entity, f.Schedule, f.Detail)
		}
		if more := r.Counts[c] - len(list); more > 0 {
			fmt.Fprintf(w, "  … and %d more\n", more)
		}
	}
	for _, s := range r.Shrunk {
		fmt.Fprintf(w, "\nshrunk %s: %s → %s (%d request(s) before the client's retries; failed in %d of %d runs)\n  repeat: %s\n",
			s.Category, s.From, s.Schedule, s.Requests, s.Tries, s.Runs, s.Command)
	}
	if !r.Complete {
		fmt.Fprintf(w, "\nincomplete: %s\n", r.Interrupted)
	}
}

func msText(ms float64) string {
	return (time.Duration(ms * float64(time.Millisecond))).Round(time.Millisecond).String()
}

// Merge joins shards' reports into one: counts added, findings listed up to listed per
// category, latencies merged by their histograms (so p50 and p99 are the histogram's,
// within a bucket's width), the elapsed time the longest shard's.
func Merge(reports []*Report, listed int) (*Report, error) {
	if len(reports) == 0 {
		return nil, errors.New("merge storm reports: none given")
	}
	if listed <= 0 {
		listed = DefaultListed
	}
	first := reports[0]
	out := &Report{Kind: Kind, SchemaVersion: SchemaVersion, Target: first.Target, Source: first.Source, Seed: first.Seed,
		Started: first.Started, Clients: first.Clients, Mix: first.Mix, Schedule: first.Schedule, Counts: map[string]int{}, Complete: true}
	seen := map[string]bool{}
	for _, r := range reports {
		switch {
		case r.Kind != Kind:
			return nil, fmt.Errorf("merge storm reports: %q is not a storm report (kind %q)", r.Target, r.Kind)
		case r.Target != first.Target || r.Seed != first.Seed:
			return nil, fmt.Errorf("merge storm reports: shards of different storms (target %s seed %d, and target %s seed %d): merge the shards of one storm", first.Target, first.Seed, r.Target, r.Seed)
		}
		for _, s := range r.Shards {
			if seen[s] {
				return nil, fmt.Errorf("merge storm reports: shard %s given twice", s)
			}
			seen[s] = true
			out.Shards = append(out.Shards, s)
		}
		if r.Started.Before(out.Started) {
			out.Started = r.Started
		}
		out.Ops += r.Ops
		out.Done += r.Done
		out.Attempts += r.Attempts
		out.Faulted += r.Faulted
		out.ElapsedMS = math.Max(out.ElapsedMS, r.ElapsedMS)
		out.Latency.merge(r.Latency)
		for c, n := range r.Counts {
			out.Counts[c] += n
		}
		for _, c := range Categories {
			for _, f := range r.Findings[c] {
				if len(out.Findings[c]) < listed {
					if out.Findings == nil {
						out.Findings = map[string][]Finding{}
					}
					out.Findings[c] = append(out.Findings[c], f)
				}
			}
		}
		out.Shrunk = append(out.Shrunk, r.Shrunk...)
		if !r.Complete {
			out.Complete = false
			out.Interrupted = strings.TrimPrefix(out.Interrupted+"; "+strings.Join(r.Shards, ",")+": "+r.Interrupted, "; ")
		}
	}
	sort.Strings(out.Shards)
	out.P50MS, out.P99MS = out.Latency.quantile(0.50), out.Latency.quantile(0.99)
	if out.ElapsedMS > 0 {
		out.Throughput = float64(out.Done) / (out.ElapsedMS / 1000)
	}
	return out, nil
}

// ReadReport reads a storm report.
func ReadReport(data []byte) (*Report, error) {
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("read storm report: %w", err)
	}
	if r.Kind != Kind {
		return nil, fmt.Errorf("read storm report: kind %q, want %q", r.Kind, Kind)
	}
	return &r, nil
}

// IsReport reports whether a report.json is a storm's.
func IsReport(data []byte) bool {
	var probe struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(data, &probe) == nil && probe.Kind == Kind
}

// histogram counts latencies in buckets growing by a factor of 1.25 from 1 ms: enough to
// merge shards' p50 and p99 within a bucket's width (25 %), at a fixed size.
type histogram struct {
	Counts []int64 `json:"counts"` // Counts[i]: latencies below bucketUpper(i) ms and at or above bucketUpper(i-1)
}

const histogramBuckets = 80 // up to 1.25^79 ms: about 6 days

func bucketUpper(i int) float64 { return math.Pow(1.25, float64(i)) }

func (h *histogram) add(d time.Duration) {
	if h.Counts == nil {
		h.Counts = make([]int64, histogramBuckets)
	}
	ms := millis(d)
	i := 0
	if ms >= 1 {
		i = min(int(math.Log(ms)/math.Log(1.25))+1, histogramBuckets-1)
	}
	h.Counts[i]++
}

func (h *histogram) merge(o histogram) {
	if h.Counts == nil {
		h.Counts = make([]int64, histogramBuckets)
	}
	for i, n := range o.Counts {
		if i < len(h.Counts) {
			h.Counts[i] += n
		}
	}
}

// quantile is the upper edge of the bucket holding the q-quantile.
func (h histogram) quantile(q float64) float64 {
	var total int64
	for _, n := range h.Counts {
		total += n
	}
	if total == 0 {
		return 0
	}
	target := int64(math.Ceil(q * float64(total)))
	var seen int64
	for i, n := range h.Counts {
		seen += n
		if seen >= max(target, 1) {
			return bucketUpper(i)
		}
	}
	return bucketUpper(len(h.Counts) - 1)
}
