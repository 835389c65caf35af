package meter

import "testing"

type count struct{ start, steps, done int }

func (c *count) Start(int, int64) { c.start++ }
func (c *count) Step(int64)       { c.steps++ }
func (c *count) Done()            { c.done++ }

func TestOr(t *testing.T) {
	m := Or(nil) // calls on the stand-in do nothing and do not panic
	m.Start(1, 1)
	m.Step(1)
	m.Done()
	c := &count{}
	m = Or(c)
	m.Start(2, 0)
	m.Step(0)
	m.Step(0)
	m.Done()
	if *c != (count{1, 2, 1}) {
		t.Errorf("calls reached the meter as %+v", *c)
	}
}
