package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MarshalJSON writes the plan with stable keys (struct order; partition
// names sorted) and int64 values as JSON numbers.
func (p *Plan) MarshalJSON() ([]byte, error) {
	type plain Plan // no MarshalJSON: avoids recursion
	return json.Marshal((*plain)(p))
}

// ParsePlan reads a plan written by MarshalJSON. It refuses documents of
// another format or a newer version, and plans that are not internally
// consistent (a group without inputs, counts that do not match).
func ParsePlan(data []byte) (*Plan, error) {
	type plain Plan
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("parse plan: %w", err)
	}
	if head.Format != DocumentFormat {
		return nil, fmt.Errorf("parse plan: format is %q, want %q", head.Format, DocumentFormat)
	}
	if head.Version != DocumentVersion {
		return nil, fmt.Errorf("parse plan: version %d is not supported (this icectl reads version %d)", head.Version, DocumentVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // keeps partition values exact
	var p plain
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("parse plan: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("parse plan: trailing data after the plan")
	}
	out := (*Plan)(&p)
	if err := out.validate(); err != nil {
		return nil, fmt.Errorf("parse plan: %w", err)
	}
	return out, nil
}

func (p *Plan) validate() error {
	seen := map[string]struct{}{}
	ids := map[string]struct{}{}
	for i := range p.Groups {
		g := &p.Groups[i]
		if g.ID == "" {
			return fmt.Errorf("group %d has no id", i+1)
		}
		if _, dup := ids[g.ID]; dup {
			return fmt.Errorf("group id %s appears twice", g.ID)
		}
		ids[g.ID] = struct{}{}
		if len(g.Inputs) == 0 || g.InputFiles != len(g.Inputs) {
			return fmt.Errorf("group %s lists %d inputs but says %d", g.ID, len(g.Inputs), g.InputFiles)
		}
		var bytes int64
		for _, f := range g.Inputs {
			if _, dup := seen[f.Path]; dup {
				return fmt.Errorf("data file %s is in two groups", f.Path)
			}
			seen[f.Path] = struct{}{}
			bytes += f.SizeBytes
		}
		if bytes != g.InputBytes {
			return fmt.Errorf("group %s input bytes %d do not add up to %d", g.ID, g.InputBytes, bytes)
		}
	}
	for _, c := range p.RetireAfterGroups {
		for _, id := range c.Groups {
			if _, ok := ids[id]; !ok {
				return fmt.Errorf("delete %s is retired after unknown group %s", c.Delete.Path, id)
			}
		}
	}
	return nil
}
