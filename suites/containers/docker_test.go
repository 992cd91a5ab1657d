package containers_test

import (
	"context"

	"github.com/moby/moby/client"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/testcontainers/testcontainers-go"
)

// dockerClient is a raw engine client for what testcontainers has no verb for
// (disconnecting a running container from one network, SIGKILL). Closed after the spec.
func dockerClient(ctx context.Context) *testcontainers.DockerClient {
	GinkgoHelper()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cli.Close)
	return cli
}

func networkDisconnectOptions(containerID string) client.NetworkDisconnectOptions {
	return client.NetworkDisconnectOptions{Container: containerID, Force: true}
}

func networkConnectOptions(containerID string) client.NetworkConnectOptions {
	return client.NetworkConnectOptions{Container: containerID}
}

// killContainer sends SIGKILL: no graceful shutdown, exactly like a crashed host.
func killContainer(ctx context.Context, ctr testcontainers.Container) {
	GinkgoHelper()
	_, err := dockerClient(ctx).ContainerKill(ctx, ctr.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"})
	Expect(err).NotTo(HaveOccurred())
}
