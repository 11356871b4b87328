// Package apitest holds the test that every exported function of the library refuses, with an
// error naming the argument, the bad arguments a caller can pass, instead of panicking or returning
// garbage (the reliability issue's class 7). It has no code of its own.
package apitest
