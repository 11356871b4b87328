package paper

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/vaisgplvm/vaisgplvm/vaisgplvm/report"
)

// ReadClaims returns the claims stored in a table's JSON on record (what `reproduce` writes as
// tableN.json: an object whose "claims" field lists Claim values), so that a notebook or a
// report states the verdict at the paper's protocol from the record, not from typed numbers.
// Errors: the file cannot be read, is not such JSON, or holds no claims.
func ReadClaims(path string) ([]Claim, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("paper: claims: %w", err)
	}
	var rec struct {
		Claims []Claim `json:"claims"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("paper: claims: %s is not a table's JSON: %w", path, err)
	}
	if len(rec.Claims) == 0 {
		return nil, fmt.Errorf("paper: claims: %s holds no claims", path)
	}
	return rec.Claims, nil
}

// ClaimsTable lays claims out as a table: one row per claim with the paper's ordering and values,
// ours, and whether the orderings agree ("yes"; "best only" when only the first method is the
// same; "no").
func ClaimsTable(title string, claims []Claim) report.Table {
	t := report.Table{Title: title, Header: []string{"claim", "the paper", "ours", "holds"}}
	for _, c := range claims {
		holds := "no"
		switch {
		case c.Agree:
			holds = "yes"
		case c.SameBest:
			holds = "best only"
		}
		t.Rows = append(t.Rows, []string{c.Subject, c.Paper, c.Ours, holds})
	}
	return t
}
