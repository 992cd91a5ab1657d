module github.com/idemproof/idemproof/examples/global-counter

go 1.26.8

// The example is tested against the harness in this checkout.
replace github.com/idemproof/idemproof => ../..

require (
	github.com/idemproof/idemproof v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
