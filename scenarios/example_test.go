package scenarios_test

import (
	"fmt"

	"github.com/idemproof/idemproof/scenarios"
)

func ExampleSelect() {
	list, err := scenarios.Select([]string{"replay/after-*"}, []string{"speed:slow"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range list {
		fmt.Println(s.ID, s.Level)
	}
	// Output:
	// replay/after-hold SAFETY
}
