package experiment

import (
	"sync"
	"testing"
)

// TestProvenancePinned: the commit Provenance records is read once, at PinProvenance; a tree that
// moves on later (here: a reader that would now answer another revision) does not change it.
func TestProvenancePinned(t *testing.T) {
	saved := readCommit
	defer func() { readCommit, pinOnce, pinned = saved, sync.Once{}, "" }()
	revisions := []string{"aaaa", "bbbb"}
	readCommit = func() string {
		r := revisions[0]
		revisions = revisions[1:]
		return r
	}
	pinOnce, pinned = sync.Once{}, ""
	PinProvenance()
	for range 2 {
		if c := Provenance([]string{"train"})["commit"]; c != "aaaa" {
			t.Fatalf("Provenance records %q, want the revision read at PinProvenance, aaaa", c)
		}
	}
	if len(revisions) != 1 {
		t.Errorf("the revision was read %d times, want once", 2-len(revisions))
	}
}
