//go:build !linux

package main

import "syscall"

// procAttr has no parent-death signal outside Linux; servers stop when
// their stdin closes or on SIGTERM.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
