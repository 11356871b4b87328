// Package docker_test checks that docker/Dockerfile pins the Go and GoNB versions of go.mod, builds
// what its build arguments say, and that the build context leaves out what it should.
package docker_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestDockerfileMatchesGoMod(t *testing.T) {
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	arg := func(name string) string {
		m := regexp.MustCompile(`(?m)^ARG ` + name + `=(\S+)`).FindSubmatch(df)
		if m == nil {
			t.Fatalf("Dockerfile has no ARG %s=...", name)
		}
		return string(m[1])
	}
	goLine := regexp.MustCompile(`(?m)^go (\S+)`).FindSubmatch(mod)
	if goLine == nil || arg("GO_VERSION") != string(goLine[1]) {
		t.Errorf("Dockerfile GO_VERSION %s, go.mod go %s", arg("GO_VERSION"), goLine[1])
	}
	gonb := regexp.MustCompile(`(?m)^\s*github.com/janpfeifer/gonb (v\S+)`).FindSubmatch(mod)
	if gonb == nil || arg("GONB_VERSION") != string(gonb[1]) {
		t.Errorf("Dockerfile GONB_VERSION %s, go.mod gonb %s", arg("GONB_VERSION"), gonb)
	}
	for _, want := range []string{"github.com/janpfeifer/gonb golang.org/x/tools/cmd/goimports", "COPY go.mod go.sum", "EXPOSE 8888",
		`= "${GONB_VERSION}"`, "GOFLAGS=${XLA_TAGS}", "linux-${TARGETARCH:-amd64}"} {
		if !strings.Contains(string(df), want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
}

// TestDockerignore: the build context leaves out version control and run outputs.
func TestDockerignore(t *testing.T) {
	b, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".git", "out/"} {
		if !strings.Contains(string(b), want) {
			t.Errorf(".dockerignore lacks %q", want)
		}
	}
}
