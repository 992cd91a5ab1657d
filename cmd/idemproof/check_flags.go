package main

import (
	"strings"
)

// listFlag is a repeatable flag that also accepts comma-separated lists:
// --only replay/*,race/burst-50 --only key/missing.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*l = append(*l, part)
		}
	}
	return nil
}

// repeatFlag is a repeatable flag whose values are kept whole (a profile path may
// contain a comma).
type repeatFlag []string

func (r *repeatFlag) String() string { return strings.Join(*r, " ") }

func (r *repeatFlag) Set(v string) error {
	*r = append(*r, v)
	return nil
}
