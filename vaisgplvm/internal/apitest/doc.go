// Package apitest holds tests of the library as a whole: that every exported function refuses,
// with an error naming the argument, the bad arguments a caller can pass, instead of panicking or
// returning garbage (the reliability issue's class 7), and that the imports follow
// docs/architecture.md's layer table (TestLayers). It has no code of its own.
package apitest
