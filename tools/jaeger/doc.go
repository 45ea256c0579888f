// Package jaeger pins the Jaeger the trace test reads traces back from
// (github.com/jaegertracing/jaeger v1.76.0, its cmd/jaeger program, as a
// tool of this module); install-jaeger.sh builds it to build/tools/jaeger.
package jaeger
