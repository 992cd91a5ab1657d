//go:build !unix

package cpumeter

import (
	"errors"
	"time"
)

func processCPU() (time.Duration, error) {
	return 0, errors.New("process CPU time is read with getrusage, which this system lacks")
}
