package containers_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/idemproof/idemproof/containers/proxyctr"
	"github.com/idemproof/idemproof/faultproxy"
	fpclient "github.com/idemproof/idemproof/faultproxy/client"
)

// proxyController drives a containerised proxy through its admin API.
func proxyController(ctx context.Context, px *proxyctr.Container) faultproxy.Controller {
	GinkgoHelper()
	admin, err := px.AdminURL(ctx)
	Expect(err).NotTo(HaveOccurred())
	return fpclient.New(admin, px.AdminToken())
}
