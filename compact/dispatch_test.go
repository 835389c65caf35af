package compact

import (
	"slices"
	"testing"

	"github.com/icectl/icectl/plan"
)

// TestDispatchOrderLargestFirst: groups start largest first, ties in plan
// order, and the states themselves (the report's order) are untouched.
func TestDispatchOrderLargestFirst(t *testing.T) {
	sizes := []int64{10, 300, 20, 300, 5, 40}
	var states []*groupState
	for i, n := range sizes {
		states = append(states, &groupState{g: &plan.Group{ID: string(rune('a' + i)), InputBytes: n}})
	}
	var got []string
	for _, st := range dispatchOrder(states) {
		got = append(got, st.g.ID)
	}
	if want := []string{"b", "d", "f", "c", "a", "e"}; !slices.Equal(got, want) {
		t.Errorf("dispatch order %v, want %v", got, want)
	}
	if states[0].g.ID != "a" || states[5].g.ID != "f" {
		t.Errorf("dispatchOrder reordered its argument")
	}
}
