package profile_test

import (
	"fmt"

	"github.com/idemproof/idemproof/profile"
)

func ExampleParse() {
	_, err := profile.Parse("refunds.yaml", []byte(`extends: ietf-draft-07
name: refunds
base_url: http://127.0.0.1:8080
operation: {path: /v1/refunds, body: '{"order_id": "{{.Entity}}"}'}
side_effects: {path: '/v1/refunds?order_id={{.Entity}}', count: data.#}
expect: {mismatch: 200}
retention: soon
`))
	fmt.Println(err)
	// Output:
	// profile refunds.yaml: line 6: expect.mismatch: must be a 4xx status (422 in draft-07, 400 at Stripe), got 200
	// profile refunds.yaml: line 7: retention: must be a duration such as "2s" or "400ms", got "soon"
}
