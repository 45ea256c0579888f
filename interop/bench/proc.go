package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is a server under test, in its own process so that it never shares
// a Go runtime with the load generator.
type proc struct {
	name  string
	url   string
	admin string // corral's admin listener (with /metrics), when it has one
	cmd   *exec.Cmd
	stdin io.WriteCloser
	log   *os.File
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start runs argv with the port substituted for every "{port}", logging its
// output to logPath, and waits until ready succeeds (or timeout).
func start(ctx context.Context, name, logPath string, env []string, timeout time.Duration, ready func(url string) error, argv ...string) (*proc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	for i := range argv {
		argv[i] = strings.ReplaceAll(argv[i], "{port}", strconv.Itoa(port))
	}
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s: log: %w", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = procAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		lf.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("%s: start: %w", name, err)
	}
	p := &proc{name: name, url: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), cmd: cmd, stdin: stdin, log: lf}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(timeout)
	for {
		err := ready(p.url)
		if err == nil {
			go func() { <-exited }()
			return p, nil
		}
		select {
		case e := <-exited:
			lf.Close()
			return nil, fmt.Errorf("%s exited before it was ready (%v); see %s", name, e, logPath)
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s not ready after %s: %w (see %s)", name, timeout, err, logPath)
		}
	}
}

// pid returns the server's process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop asks the server to exit (stdin closed, SIGTERM) and kills it
// after two seconds.
func (p *proc) stop() {
	if p == nil {
		return
	}
	_ = p.stdin.Close()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for p.cmd.ProcessState == nil {
			if err := p.cmd.Process.Signal(syscall.Signal(0)); err != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = p.cmd.Process.Kill()
	}
	p.log.Close()
}

// rssKiB returns the resident set size of pid in KiB.
func rssKiB(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("rss: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("rss: no VmRSS")
}
