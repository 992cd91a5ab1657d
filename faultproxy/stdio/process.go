package stdio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Command is how to start a stdio server: the program and its arguments, what to add to
// the environment, and where to run it.
type Command struct {
	// Args is the program and its arguments; a program without a slash is looked up in
	// PATH.
	Args []string
	// Env are NAME=value pairs added to the environment the caller runs in, overriding a
	// variable of the same name.
	Env []string
	// Dir is the working directory; "" is the caller's.
	Dir string
}

// String is the command as a shell would write it, for messages.
func (c Command) String() string {
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = shellQuote(a)
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@,+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// StderrTailBytes bounds what is kept of a server's stderr: its last bytes, for the
// message that says why it stopped.
const StderrTailBytes = 8 << 10

// Process is a started server: the leader of a process group of its own, so that
// whatever it starts (the binary `go run` compiled, a shell's children) ends with it.
// Its stdin and stdout are the caller's; its stderr is kept (the last StderrTailBytes)
// and copied to the writer Start was given.
//
// Every Process is reaped: Stop and Kill return once the server has exited and been
// waited for, and they end the rest of its process group with SIGKILL.
type Process struct {
	cmd     Command
	exe     *exec.Cmd
	stdin   *os.File
	stdout  *os.File
	tail    *tail
	errDone chan struct{} // stderr read to its end
	done    chan struct{} // the server exited and was reaped
	waitErr error
	stopMu  sync.Mutex
	killed  bool
}

// ErrNotFound is a command whose program is not there to run.
var ErrNotFound = errors.New("program not found")

// Start starts the server. stderr, when not nil, gets a copy of what it writes there.
// The error of a program that cannot be started says why and names the command.
func Start(c Command, stderr io.Writer) (*Process, error) {
	if len(c.Args) == 0 || c.Args[0] == "" {
		return nil, errors.New("start server: no command: give the program and its arguments")
	}
	exe := exec.Command(c.Args[0], c.Args[1:]...)
	if exe.Err != nil {
		return nil, fmt.Errorf("start server %s: %w: %w", c, ErrNotFound, exe.Err)
	}
	exe.Dir = c.Dir
	if len(c.Env) > 0 {
		exe.Env = append(os.Environ(), c.Env...)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start server %s: %w", c, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("start server %s: %w", c, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("start server %s: %w", c, err)
	}
	exe.Stdin, exe.Stdout, exe.Stderr = inR, outW, errW
	ownProcessGroup(exe)
	if err := exe.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, exec.ErrNotFound) {
			err = fmt.Errorf("%w: %w", ErrNotFound, err)
		}
		return nil, fmt.Errorf("start server %s: %w", c, err)
	}
	// The child has its ends; ours must go, or the server's exit would never show as the
	// end of its stdout.
	closeAll(inR, outW, errW)
	p := &Process{cmd: c, exe: exe, stdin: inW, stdout: outR, tail: &tail{max: StderrTailBytes, copy: stderr},
		errDone: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.errDone)
		_, _ = io.Copy(p.tail, errR)
		errR.Close()
	}()
	go p.wait()
	return p, nil
}

// wait reaps the server. When it exits, whatever is left of its process group is killed
// first — its session is over, and a child holding its stdout open would hide that — while
// the exited server, not yet reaped, still holds the group's id.
func (p *Process) wait() {
	awaitExit(p.exe.Process.Pid)
	killGroup(p.exe)
	p.waitErr = p.exe.Wait()
	close(p.done)
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// Command is what the process was started from.
func (p *Process) Command() Command { return p.cmd }

// Pid is the server's process id, and its process group's.
func (p *Process) Pid() int { return p.exe.Process.Pid }

// Stdin is the server's standard input.
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// Stdout is the server's standard output.
func (p *Process) Stdout() io.Reader { return p.stdout }

// Done is closed once the server has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exit says how the server ended ("exit status 1", "signal: killed"); "" while it runs.
func (p *Process) Exit() string {
	select {
	case <-p.done:
	default:
		return ""
	}
	if p.waitErr == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	return p.waitErr.Error()
}

// Stderr is the last of what the server wrote to its stderr (at most StderrTailBytes),
// without surrounding blank space. Once the server has ended it waits, briefly, for
// the rest of it to arrive.
func (p *Process) Stderr() string {
	select {
	case <-p.done:
		select {
		case <-p.errDone:
		case <-time.After(200 * time.Millisecond): // a grandchild may still hold it open
		}
	default:
	}
	return p.tail.String()
}

// Kill ends the server and its process group at once (SIGKILL) and returns once it is
// reaped: the crash of a server, as a fault.
func (p *Process) Kill() {
	p.stopMu.Lock()
	select {
	case <-p.done: // it had ended by itself: its exit says how
	default:
		p.killed = true
	}
	p.stopMu.Unlock()
	p.killUnlessDone()
	<-p.done
	p.closePipes()
}

// killUnlessDone kills the group while the server is not reaped (once it is, wait has
// killed the group, and its id may belong to another process).
func (p *Process) killUnlessDone() {
	select {
	case <-p.done:
	default:
		killGroup(p.exe)
	}
}

// Killed reports whether Kill (or Stop's last resort) ended the server.
func (p *Process) Killed() bool {
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	return p.killed
}

// Stop ends the server as MCP's stdio transport asks of a client: stdin is closed, the
// server given grace to exit, then SIGTERM (to its process group), grace again, then
// SIGKILL. Whatever is left of its process group is killed once it has exited. It
// returns once the server is reaped.
func (p *Process) Stop(grace time.Duration) {
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(grace):
		termGroup(p.exe)
		select {
		case <-p.done:
		case <-time.After(grace):
			p.stopMu.Lock()
			p.killed = true
			p.stopMu.Unlock()
		}
	}
	p.killUnlessDone() // the server is to be killed; wait kills the rest of its group
	<-p.done
	p.closePipes()
}

// reap ends whatever is left of the server's process group, waits for the server and
// closes the pipes: a server whose output ended is done for, even if it lingers.
func (p *Process) reap() {
	p.killUnlessDone()
	<-p.done
	p.closePipes()
}

func (p *Process) closePipes() {
	p.stdin.Close()
	p.stdout.Close()
}

// String names the process for messages: its command and pid.
func (p *Process) String() string { return p.cmd.String() + " (pid " + strconv.Itoa(p.Pid()) + ")" }

// tail keeps the last max bytes written to it, and copies them on.
type tail struct {
	mu   sync.Mutex
	max  int
	buf  []byte
	cut  bool
	copy io.Writer
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
		t.cut = true
	}
	t.mu.Unlock()
	if t.copy != nil {
		_, _ = t.copy.Write(b) // a broken copy must not stop the server's stderr being read
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "\uFFFD"))
	if t.cut && s != "" {
		s = "…" + s
	}
	return s
}
