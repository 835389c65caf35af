package maintain

import (
	"context"
	"errors"
	"time"

	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/iceberg/metastore"
)

// CatalogClaims takes each table's claim through its catalog
// (iceberg/claim), the claim the single verbs take too, so a maintain run
// and a verb run by hand never work on one table at once.
type CatalogClaims struct {
	Cat     metastore.Committer
	Options claim.Options
}

// Do runs fn holding id's claim.
func (c CatalogClaims) Do(ctx context.Context, id metastore.Ident, fn func(ctx context.Context) error) error {
	return claim.Do(ctx, c.Cat, id, c.Options, fn)
}

// tookOver is the claim of another run that the claim fn runs under
// took over (claim.Do puts it in fn's context), nil when none.
func tookOver(ctx context.Context) *TookOver {
	c := claim.FromContext(ctx)
	if c == nil || c.TookOver() == nil {
		return nil
	}
	t := c.TookOver()
	return &TookOver{Holder: t.Previous.Holder(), Why: t.Why}
}

// Held reports whether err is a claim another run holds.
func (CatalogClaims) Held(err error) (holder string, until time.Time, ok bool) {
	var h *claim.HeldError
	if !errors.As(err, &h) {
		return "", time.Time{}, false
	}
	holder = h.Holder
	if h.Verb != "" {
		holder += " (" + h.Verb + ")"
	}
	return holder, h.Until, true
}
