// Command dbbench runs the database-alone benchmark (package dbbench): one PostgreSQL
// container from the project's image, a database per data model with pgstore's schema,
// and pgbench inside the container over its Unix socket, unkeyed and keyed refunds
// alternating in every round. Each run is checked against the database: it must have
// added one refund per transaction pgbench reported, and a keyed run one key record per
// transaction, so a statement that quietly wrote nothing cannot pass for a fast one.
// ci/bench database starts it; docs/reference.md reports it.
//
//	dbbench [-rounds 5] [-duration 5s] [-clients 8] [-fsync=false]
//
// Like every test and benchmark of the project (the testcontainers module's default),
// the server runs with fsync off unless -fsync is given: what the database's CPU charges
// for a key, not what a disk's flush adds to every commit of either kind.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"time"

	"github.com/idemproof/idemproof/ci/internal/dbbench"
	"github.com/idemproof/idemproof/internal/dockertest"
	"github.com/idemproof/idemproof/reference/pgstore"
	"github.com/jackc/pgx/v5"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
)

// scriptDir is where the scripts are in the container.
const scriptDir = "/dbbench/"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dbbench:", err)
		os.Exit(1)
	}
}

func run() error {
	rounds := flag.Int("rounds", 5, "interleaved rounds")
	duration := flag.Duration("duration", 5*time.Second, "length of one pgbench run, whole seconds")
	clients := flag.Int("clients", 8, "pgbench clients")
	fsync := flag.Bool("fsync", false, "run the server with fsync on: every commit waits for its flush")
	flag.Parse()
	secs := int(*duration / time.Second)
	switch {
	case secs <= 0 || *duration%time.Second != 0:
		return fmt.Errorf("-duration must be whole seconds, such as 5s (pgbench -T), got %v", *duration)
	case *rounds <= 0:
		return fmt.Errorf("-rounds must be positive, got %d", *rounds)
	case *clients <= 0:
		return fmt.Errorf("-clients must be positive, got %d", *clients)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	files, err := containerFiles()
	if err != nil {
		return err
	}
	opts := []testcontainers.ContainerCustomizer{testcontainers.WithFiles(files...)}
	if *fsync {
		opts = append(opts, testcontainers.WithCmd("postgres", "-c", "fsync=on"))
	}
	pg, err := dockertest.StartPostgres(ctx, opts...)
	if pg != nil && pg.PostgresContainer != nil {
		defer testcontainers.TerminateContainer(pg.PostgresContainer)
	}
	if err != nil {
		return fmt.Errorf("%w (is the image built? ci/images/build postgres)", err)
	}
	conns := map[string]*pgx.Conn{}
	defer func() {
		for _, c := range conns {
			c.Close(context.WithoutCancel(ctx))
		}
	}()
	admin, err := connect(ctx, pg.DSN)
	if err != nil {
		return err
	}
	conns[""] = admin
	var fsyncSetting string // as the server has it, not as asked
	if err := admin.QueryRow(ctx, "SHOW fsync").Scan(&fsyncSetting); err != nil {
		return fmt.Errorf("show fsync: %w", err)
	}
	if want := map[bool]string{false: "off", true: "on"}[*fsync]; fsyncSetting != want {
		return fmt.Errorf("the server runs with fsync %s, want %s", fsyncSetting, want)
	}
	for _, m := range dbbench.Models {
		if _, err := admin.Exec(ctx, "CREATE DATABASE "+m.Database); err != nil {
			return fmt.Errorf("create database %s: %w", m.Database, err)
		}
		dsn, err := withDatabase(pg.DSN, m.Database)
		if err != nil {
			return err
		}
		store, err := pgstore.Open(ctx, dsn) // pgstore's own schema, as the reference creates it
		if err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		store.Close()
		c, err := connect(ctx, dsn)
		if err != nil {
			return err
		}
		conns[m.Database] = c
		if m.DDL != "" {
			ddl, err := fs.ReadFile(dbbench.Scripts, "sql/"+m.DDL)
			if err != nil {
				return err
			}
			if _, err := c.Exec(ctx, string(ddl)); err != nil {
				return fmt.Errorf("%s: %s: %w", m.Name, m.DDL, err)
			}
		}
	}

	fmt.Fprintf(os.Stderr, "dbbench: %d rounds of %ds per run, %d clients, fsync %s, PostgreSQL in a container, pgbench over its socket\n",
		*rounds, secs, *clients, fsyncSetting)
	var samples []dbbench.Sample
	for round := 1; round <= *rounds; round++ {
		for _, m := range dbbench.Models {
			for _, keyed := range []bool{false, true} {
				script, keyRows := dbbench.UnkeyedScript, ""
				if keyed {
					script, keyRows = m.Keyed, m.KeyRows
				}
				p, err := measure(ctx, pg.PostgresContainer, conns[m.Database], m.Database, script, keyRows, secs, *clients)
				if err != nil {
					return fmt.Errorf("round %d, %s, %s: %w", round, m.Name, script, err)
				}
				fmt.Fprintf(os.Stderr, "round %d, %-20s %-28s %9.0f tps  %8d transactions\n", round, m.Name, script, p.TPS, p.Transactions)
				samples = append(samples, dbbench.Sample{Model: m.Name, Keyed: keyed, Round: round, TPS: p.TPS})
			}
		}
	}
	rows, err := dbbench.Summarise(samples)
	if err != nil {
		return err
	}
	fmt.Print(dbbench.Table(rows))
	return nil
}

// measure runs script for secs seconds and checks what it wrote. Every run starts from
// empty tables and a checkpoint: a random key's index costs more as it outgrows the
// cache, so rounds stay comparable only if none inherits the last one's rows, and each
// has the same full-page images ahead.
func measure(ctx context.Context, ctr testcontainers.Container, c *pgx.Conn, db, script, keyRows string, secs, clients int) (dbbench.Pgbench, error) {
	// Empty tables also make the rows counted afterwards the run's own.
	if _, err := c.Exec(ctx, "TRUNCATE ledger, idempotency_keys; CHECKPOINT"); err != nil {
		return dbbench.Pgbench{}, fmt.Errorf("empty the tables: %w", err)
	}
	runCtx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+time.Minute)
	defer cancel()
	code, out, err := ctr.Exec(runCtx, []string{"pgbench", "-n", "-M", "prepared", "-c", strconv.Itoa(clients),
		"-j", "2", "-T", strconv.Itoa(secs), "-h", "/var/run/postgresql", "-U", "idemproof",
		"-f", scriptDir + script, db}, tcexec.Multiplexed())
	if err != nil {
		return dbbench.Pgbench{}, fmt.Errorf("pgbench: %w", err)
	}
	report, _ := io.ReadAll(out)
	if code != 0 {
		return dbbench.Pgbench{}, fmt.Errorf("pgbench exited %d:\n%s", code, report)
	}
	p, err := dbbench.ParsePgbench(string(report))
	if err != nil {
		return p, fmt.Errorf("%w:\n%s", err, report)
	}
	refunds, err := count(ctx, c, dbbench.LedgerRows)
	if err != nil {
		return p, err
	}
	if refunds != p.Transactions {
		return p, fmt.Errorf("pgbench reported %d transactions, the ledger gained %d refunds", p.Transactions, refunds)
	}
	if keyRows != "" {
		keys, err := count(ctx, c, keyRows)
		if err != nil {
			return p, err
		}
		if keys != p.Transactions {
			return p, fmt.Errorf("pgbench reported %d keyed transactions, %d key records were written", p.Transactions, keys)
		}
	}
	return p, nil
}

func count(ctx context.Context, c *pgx.Conn, query string) (int64, error) {
	var n int64
	if err := c.QueryRow(ctx, query).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: %w", query, err)
	}
	return n, nil
}

// containerFiles are the scripts, copied into the container before it starts.
func containerFiles() ([]testcontainers.ContainerFile, error) {
	entries, err := fs.ReadDir(dbbench.Scripts, "sql")
	if err != nil {
		return nil, err
	}
	var files []testcontainers.ContainerFile
	for _, e := range entries {
		f, err := dbbench.Scripts.Open("sql/" + e.Name())
		if err != nil {
			return nil, err
		}
		files = append(files, testcontainers.ContainerFile{Reader: f, ContainerFilePath: scriptDir + e.Name(), FileMode: 0o644})
	}
	if len(files) == 0 {
		return nil, errors.New("no scripts embedded")
	}
	return files, nil
}

func connect(ctx context.Context, dsn string) (*pgx.Conn, error) {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", dsn, err)
	}
	return c, nil
}

func withDatabase(dsn, db string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("postgres dsn: %w", err)
	}
	u.Path = "/" + db
	return u.String(), nil
}
