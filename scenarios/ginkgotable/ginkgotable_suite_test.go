package ginkgotable_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestGinkgoTable(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ginkgotable")
}
