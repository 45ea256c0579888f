package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// stdioServer is the built binary serving MCP over its stdin and stdout.
type stdioServer struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout a line at a time, closed at its end
	stderr *syncBuf
	exited chan error
}

// startStdio runs `corral serve args...` on the shared compilation cache,
// with env added to its environment (which may name another cache). It
// is killed when the test ends, and its stderr logged if the test failed.
func startStdio(t testing.TB, env []string, args ...string) *stdioServer {
	t.Helper()
	cmd := exec.Command(corralBinary(t), append([]string{"serve"}, args...)...)
	cmd.Env = append(append(os.Environ(), "CORRAL_PLUGINS_CACHE_DIR="+filepath.Join(repoRoot, "build", "cache")), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &stdioServer{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 64), stderr: &syncBuf{}, exited: make(chan error, 1)}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	go func() { s.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("stderr:\n%s", s.stderr.String())
		}
	})
	return s
}

// send writes one message, a line.
func (s *stdioServer) send(msg string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, msg+"\n"); err != nil {
		s.t.Fatalf("stdin: %v", err)
	}
}

// next returns stdout's next line, or an error when stdout ends or stays
// silent for a minute.
func (s *stdioServer) next() (string, error) {
	select {
	case l, ok := <-s.lines:
		if !ok {
			return "", errors.New("stdout ended")
		}
		return l, nil
	case <-time.After(time.Minute):
		return "", errors.New("no line on stdout within a minute")
	}
}

// line is next, failing the test on an error.
func (s *stdioServer) line() string {
	s.t.Helper()
	l, err := s.next()
	if err != nil {
		s.t.Fatal(err)
	}
	return l
}

// closeStdin ends stdin and wants the server to exit 0 within 15 s.
func (s *stdioServer) closeStdin() {
	s.t.Helper()
	s.stdin.Close()
	select {
	case err := <-s.exited:
		if err != nil {
			s.t.Errorf("exit after stdin EOF: %v, want 0", err)
		}
	case <-time.After(15 * time.Second):
		s.t.Fatal("no exit within 15s of stdin EOF")
	}
}
