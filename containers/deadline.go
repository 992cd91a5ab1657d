package containers

import "time"

// StartTimeout bounds one container start including its wait strategy. A start that
// takes longer is a broken image or an overloaded engine, not something to wait out.
const StartTimeout = 90 * time.Second
