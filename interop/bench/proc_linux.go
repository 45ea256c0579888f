package main

import "syscall"

// procAttr makes a server die with the harness, however the harness ends.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
